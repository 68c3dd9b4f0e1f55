"""`convdiff backends --probe`: one tiny case per capability cell (cells), the adapters'
declared cells (declared), and the capability table `convdiff backends` prints (capabilities).
"""
