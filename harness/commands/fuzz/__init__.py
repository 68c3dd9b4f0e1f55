"""`convdiff fuzz`: seeded config generation (gen, with its feature boundaries in boundary, its invalid forms in
invalid and its draws in draw), the neighbours of failures (steer), the campaign that runs and judges them
(campaign) at each target's pace (pace), finding signatures (findings), and minimizing and writing findings (write).
"""
