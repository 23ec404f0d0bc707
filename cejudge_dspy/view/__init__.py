"""What `cejudge view` shows: per-item rows and outcomes, chart data and their Vega-Lite specifications, the
HTML page. Pure functions over run records; the cli layer serves and writes them."""

from cejudge_dspy.view._charts import require_libraries
from cejudge_dspy.view._consistency import consistency_page, write_consistency_page
from cejudge_dspy.view._item_rows import csv_text, item_rows
from cejudge_dspy.view._page import write_page
from cejudge_dspy.view._ranking import ranking_page, write_ranking_page
from cejudge_dspy.view._run import load_view_run

__all__ = [
    "consistency_page",
    "write_consistency_page",
    "require_libraries",
    "csv_text",
    "item_rows",
    "load_view_run",
    "write_page",
    "ranking_page",
    "write_ranking_page",
]
