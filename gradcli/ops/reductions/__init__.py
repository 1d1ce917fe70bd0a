"""Operations along dims, each an entry of the op table: the reductions and softmax
(``reductions.py``), statistics and scans (``statistics.py``), and the selections with
several results, max/min, sort, topk, median, split (``selection.py``)."""
