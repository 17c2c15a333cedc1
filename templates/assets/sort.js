// Sorts a table by a column when its heading is pressed: press again to reverse.
// The page reads the same without it: the table comes least reliable first.
// A heading with data-sort="number" sorts by each cell's data-value, or else by the
// number its text starts with (a cell with none, "–", goes last either way);
// data-sort="text" sorts names as people do: task-2 before task-10.
"use strict";

(() => {
  const names = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

  const numberOf = (cell) => {
    const value = parseFloat(cell.dataset.value ?? cell.textContent);
    return Number.isNaN(value) ? null : value;
  };

  // direction: 1 ascending, -1 descending; a cell without a number goes last both ways.
  const ordered = (kind, column, direction) => (a, b) => {
    const x = a.cells[column];
    const y = b.cells[column];
    if (kind === "text") {
      return direction * names.compare(x.textContent.trim(), y.textContent.trim());
    }
    const p = numberOf(x);
    const q = numberOf(y);
    if (p === null || q === null) return (p === null) - (q === null);
    return direction * (p - q);
  };

  const sortBy = (table, heading) => {
    const ascending = heading.getAttribute("aria-sort") !== "ascending";
    const body = table.tBodies[0];
    // Array sort is stable: tied rows keep their order, least reliable first.
    const rows = [...body.rows].sort(
      ordered(heading.dataset.sort, heading.cellIndex, ascending ? 1 : -1),
    );
    body.append(...rows);
    for (const other of table.tHead.rows[0].cells) other.removeAttribute("aria-sort");
    heading.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  };

  for (const table of document.querySelectorAll("table.sortable")) {
    for (const heading of table.tHead.rows[0].cells) {
      if (!heading.dataset.sort) continue;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.append(...heading.childNodes);
      button.title = "Sort by this column; press again to reverse";
      button.addEventListener("click", () => sortBy(table, heading));
      heading.append(button);
    }
  }
})();
