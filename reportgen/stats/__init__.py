"""The statistics: counts in, numbers out. Pure: no files, no JSON, no pages."""
