"""The site stages after the report model: chart, render, badges, write."""
