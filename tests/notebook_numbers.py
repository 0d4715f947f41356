"""The numbers a notebook's prose writes that no output of it prints: each with its source.

The rule (tests/test_notebooks.py checks it for every notebook): a number in a
markdown cell must be printed by one of the notebook's outputs, with the value
as printed, or written in its code, or be an integer from 0 to 10, or a
reference ("notebook 12", "section 5.3", "Table 1"), or be listed here under
the notebook's two-digit number with where it comes from: the paper, a course
document, or arithmetic the prose does itself. Never list a number that an
output gives: print it and quote it as printed (timings change on every run,
so quote none; print the ratio or the verdict the prose relies on).

Keys are the numbers as the prose writes them ("100,000", "1e-6" for
$10^{-6}$); a listed number the prose no longer writes fails the check too.
"""
PAPER = "Vaswani et al. (2017), 'Attention Is All You Need'"

SOURCED = {
    "01": {
        "1964": "Nadaraya (1964) and Watson (1964), the two papers that introduced kernel regression",
    },
    "03": {
        "1e-13": "the prose's estimate of the truncation error at the step 1e-6: (1e-6)**2 |f'''| / 6, |f'''| about 1",
    },
    "04": {
        "2.5": "PyTorch 2.5's release notes: scaled_dot_product_attention returns zeros for a fully masked row",
    },
    "05": {
        "250": "the exercise's own example: distances of 50 and 250 positions",
    },
}
