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
        "1.473": "arithmetic: the mean of the three seeds' losses in the table",
        "1.825": "arithmetic: the mean of the three seeds' losses in the table",
        "1.711": "arithmetic: the mean of the three seeds' losses in the table",
        "0.11": "arithmetic: 1.825 - 1.711, rounded",
        "0.08": "arithmetic: 1.473 - 1.396, rounded",
        "3.4": "arithmetic: 95.3 - 91.9, logistic regression's test accuracy against seed 1's",
        "5,500": "the data: the story's training part, in characters (tasks/text.py)",
    },
    "docs/results/tokenizers.md": {
        "512": "the machine's CPU (AVX-512), and the text task's default BPE size (tasks/text.py, BPE_SIZE)",
        "32": "the text task's defaults, batches of 32 sequences of 32 tokens (tasks/text.py); and arithmetic: "
              "2^35 bytes are 32 GiB",
        "50,000": "GPT-2's vocab.bpe: 50,000 merges (tests/test_tokenizer.py reads it)",
        "256": "SHA-256, the hash the test checks the file by",
        "15496": "GPT-2's ids for 'Hello world' (tests/test_tokenizer.py)",
        "995": "GPT-2's ids for 'Hello world' (tests/test_tokenizer.py)",
        "3,000": "the generated lines tests/test_tokenizer.py traces encode_iterable's memory on",
        "12,000": "the generated lines tests/test_tokenizer.py traces encode_iterable's memory on",
        "1.5": "the bound tests/test_tokenizer.py asserts on that peak (1.5 times, plus 20 KB)",
        "8,192": "encode_iterable's stretch of characters (tokenizer/base.py, STRETCH)",
        "200,000": "the nesting depth of benchmarks/tokenizer.py's hostile file",
    },
    "docs/results/transfer.md": {
        "512": "the machine's CPU: AVX-512",
        "3.11": "the machine's Python version",
        "14": "the search's seeds, 10 to 14 (benchmarks/bert_transfer_search.py's --seeds default)",
        "2e-5": "the BERT paper's fine-tuning peaks, 2e-5 to 5e-5 (Devlin et al. 2019, appendix A.3)",
        "5e-5": "the BERT paper's fine-tuning peaks, 2e-5 to 5e-5 (Devlin et al. 2019, appendix A.3)",
        "3e-4": "a fine-tuning peak the search tried, with 1e-3 (benchmarks/bert_transfer_search.py --lr)",
        "68,608": "the classify model's parameters (the sizes of its parameters, summed)",
        "4000": "the held-out sequences of benchmarks/mask_rule.py (masked_lm.make_sequences(4000, ...))",
        "0.623": "arithmetic: the mean of pretraining_curve.json's five masked_lm_loss (SEED_MEANS)",
        "1.135": "arithmetic: the mean of pretraining_sentence_objective.json's five masked_lm_loss (SEED_MEANS)",
        "0.996": "arithmetic: the mean of pretraining_curve.json's five cloze accuracies before fine-tuning (SEED_MEANS)",
        "0.761": "arithmetic: the mean of pretraining_sentence_objective.json's five cloze accuracies before "
                 "fine-tuning (SEED_MEANS)",
        "34.1": "arithmetic: 99.94% - 65.86%, the means of pretraining_curve.json's cloze runs with 32 labels",
        "0.152": "pretraining_curve.json's gap for [CLS] with 256 labelled sequences, -0.152 (the page writes its sign "
                 "apart)",
        "24": "the machine's memory, 24 GiB",
        "0.0037": "arithmetic: the warmup schedule's peak at d_model 64, 0.3 * 64 ** -0.5 * 100 ** -0.5 = 0.00375",
        "0.731": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.601": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.782": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.458": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.317": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.463": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.815": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.733": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.848": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.640": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.404": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
        "0.451": "arithmetic: a mean over seeds of mask_rule.json (SEED_MEANS)",
    },
    "docs/results/speed.md": {
        "68": "arithmetic: a (64, 4, 257, 257) float32 array is 64 x 4 x 257 x 257 x 4 bytes",
        "16": "the classroom's d_k: d_model 64 over 4 heads",
        "17": "arithmetic: a (64, 4, 129, 129) float32 array is 64 x 4 x 129 x 129 x 4 bytes",
        "32": "the machine's L3 cache, 32 MiB (lscpu)",
        "1539": "translate's vocabulary: make_task('translate').config().vocab_size (notebook 15 prints it)",
    },
    "README.md": {
        "80": "BERT's 80/10/10 corruption rule (Devlin et al. 2019, section 3.1; tasks/masked_lm.py)",
        "2.079": "arithmetic: ln 8, the loss of a uniform guess over mlm's 8 symbols",
        "256": "classify's default labelled sequences (tasks/classification.py, n_labelled)",
        "16": "digits' default patches: (8 / 2)^2 (tasks/digits.py)",
    },
}


def _mask_rule_mean(rule, steps, where):
    return lambda records: [run["by_step"][steps][where] for run in records["mask_rule.json"]["runs"]
                            if run["rule"] == rule]


def _pretraining_values(name, key):
    return lambda records: [row[key] for row in records[name]["pretraining"]]


SEED_MEANS = {
    "docs/results/transfer.md": {
        "0.623": _pretraining_values("pretraining_curve.json", "masked_lm_loss"),
        "1.135": _pretraining_values("pretraining_sentence_objective.json", "masked_lm_loss"),
        "0.996": _pretraining_values("pretraining_curve.json", "cloze_accuracy_before_fine_tuning"),
        "0.761": _pretraining_values("pretraining_sentence_objective.json", "cloze_accuracy_before_fine_tuning"),
        **{written: _mask_rule_mean(rule, steps, where) for written, rule, steps, where in (
            ("0.731", "80/10/10", "400", "[MASK]"), ("0.601", "80/10/10", "400", "another symbol"),
            ("0.782", "80/10/10", "400", "unchanged"), ("0.458", "[MASK] only", "400", "[MASK]"),
            ("0.317", "[MASK] only", "400", "another symbol"), ("0.463", "[MASK] only", "400", "unchanged"),
            ("0.815", "80/10/10", "1000", "[MASK]"), ("0.733", "80/10/10", "1000", "another symbol"),
            ("0.848", "80/10/10", "1000", "unchanged"), ("0.640", "[MASK] only", "1000", "[MASK]"),
            ("0.404", "[MASK] only", "1000", "another symbol"), ("0.451", "[MASK] only", "1000", "unchanged"))},
    },
}
"""Numbers SOURCED lists as means over seeds: for each, the values (from the page's records, by file name)
whose mean, rounded as written, it must be (tests/test_docs_numbers.py checks)."""
