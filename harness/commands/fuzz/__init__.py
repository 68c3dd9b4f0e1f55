"""`convdiff fuzz`: seeded config generation (gen), the campaign that runs and judges them
(campaign), finding signatures (findings), and minimizing and writing findings (write).
"""
