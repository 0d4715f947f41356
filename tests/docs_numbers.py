"""The numbers the results pages and the README's task table write that no record holds: each with its source.

The rule (tests/test_docs_numbers.py checks it): a number on those pages is a value of a record under
benchmarks/results/ that the page names, or a small integer, a date, a reference, or listed here under
its page with where it comes from: a task's setting, the data, the paper, or arithmetic the page does.
A listed number the page no longer writes fails the check too.
"""
SOURCED = {
    "docs/results/training.md": {
        "512": "the machine's CPU: AVX-512",
        "1,797": "the data: scikit-learn's 8 x 8 digits are 1,797 images (tasks/digits.py)",
        "2023": "the year LLaMA (Touvron et al.) was published",
        "128": "the text task's d_model and d_ff (tasks/text.py)",
        "32,640": "arithmetic: SwiGLU's three 128 x 85 matrices",
        "32,768": "arithmetic: GELU's two 128 x 128 matrices",
        "72,512": "the modern block's parameters on Python's reference (the sizes of its parameters, summed)",
        "75,904": "GPT-2's block's parameters on Python's reference (the sizes of its parameters, summed)",
        "1.396": "arithmetic: the mean of the three seeds' losses in the table",
        "1.466": "arithmetic: the mean of the three seeds' losses in the table",
        "1.825": "arithmetic: the mean of the three seeds' losses in the table",
        "1.706": "arithmetic: the mean of the three seeds' losses in the table",
        "0.12": "arithmetic: 1.825 - 1.706, rounded",
        "0.07": "arithmetic: 1.466 - 1.396, the two means of the story's table",
        "5,500": "the data: the story's training part, in characters (tasks/text.py)",
    },
    "README.md": {
        "80": "BERT's 80/10/10 corruption rule (Devlin et al. 2019, section 3.1; tasks/masked_lm.py)",
        "2.079": "arithmetic: ln 8, the loss of a uniform guess over mlm's 8 symbols",
        "256": "classify's default labelled sequences (tasks/classification.py, n_labelled)",
        "16": "digits' default patches: (8 / 2)^2 (tasks/digits.py)",
    },
}
