"""Operations that move, copy or pick elements without arithmetic, each an entry of the op
table: reshape, transpose, getitem, stack and cat (``rearranging.py``), the other shape
operations (``shapes.py``), repeating and padding (``repeating.py``), indexing by tensors,
gathering and scattering (``indexing.py``) and the tensors made in another's shape
(``likes.py``)."""
