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
# "the paper" is Vaswani et al. (2017), "Attention Is All You Need".
SOURCED = {
    "01": {
        "1964": "Nadaraya (1964) and Watson (1964), the two papers that introduced kernel regression",
    },
    "03": {
        "1e-13": "the prose's estimate of the truncation error at the step 1e-6: (1e-6)**2 |f'''| / 6, |f'''| about 1",
        "1e-7": "arithmetic of the prose: float32's machine epsilon, 1.2e-7 as printed, to its order of magnitude",
    },
    "04": {
        "2.5": "PyTorch 2.5's release notes: scaled_dot_product_attention returns zeros for a fully masked row",
    },
    "05": {
        "250": "the exercise's own example: distances of 50 and 250 positions",
    },
    "07": {
        "4000": "the paper, section 5.3: warmup_steps = 4000",
        "100,000": "the paper, section 5.2: the base models trained for 100,000 steps (12 hours on 8 P100 GPUs)",
        "25000": "the paper, section 5.1: batches of about 25000 source and 25000 target tokens",
        "0.6": "the paper, section 6.1: beam size 4, length penalty alpha = 0.6",
        "128": "the classroom model's d_ff (python -m tinytransformer train, README's Train section)",
        "13": "the classroom model's vocabulary: 10 symbols and PAD, BOS, EOS",
        "40,745": "arithmetic of the prose: the paper's 37000 tokens and the 3,745 rows the output prints",
    },
    "08": {
        "128": "the classroom model's d_ff (python -m tinytransformer train, README's Train section)",
        "0.6": "the paper, section 6.1: beam size 4, length penalty alpha = 0.6",
        "2015": "Kingma and Ba (2015), 'Adam: A Method for Stochastic Optimization'",
        "0.07": "arithmetic of the prose: 11,200 / 16,777,216 is 0.067%, the chance a held-out row is drawn",
        "2.565": "arithmetic of the prose: ln 13, a uniform guess over the classroom model's 13 tokens",
        "11": "section 2's model: its vocabulary of 8 symbols and PAD, BOS, EOS",
    },
    "10": {
        "175": "the course's tutorial: GPT-3 has 175 billion parameters (Brown et al. 2020)",
        "65": "the paper's Table 3: the base model's 65 million parameters",
        "50": "the exercise's own example: sentences of about 50 tokens",
        "10,000": "the exercise's own example: a document of 10,000 tokens",
        "20": "the solution's arithmetic: n / d = 10,000 / 512",
        "1.5": "arithmetic of the prose: a convolution's k n d^2 over the recurrent layer's 2 n d^2 at k = 3",
    },
    "11": {
        "3000": "the command line's default step budget for train --task addition (its --help)",
        "96": "Brown et al. (2020), Table 2.1: GPT-3 175B has 96 layers; the lecture slides: '96 in GPT-3'",
    },
    "12": {
        "2.079": "arithmetic of the prose: ln 8, the loss of a uniform guess over 8 symbols",
        "15": "BERT (Devlin et al., 2019), section 3.1: 15% of the token positions are chosen",
        "8.75": "arithmetic of the prose: 0.1 * 7/8, the random replacements that change the token",
        "2e-5": "Devlin et al. (2019), appendix A.3: fine-tuning learning rates 5e-5, 3e-5, 2e-5",
        "5e-5": "Devlin et al. (2019), appendix A.3: fine-tuning learning rates 5e-5, 3e-5, 2e-5",
        "110": "Devlin et al. (2019), section 3: BERT-base, 110M parameters",
        "340": "Devlin et al. (2019), section 3: BERT-large, 340M parameters",
        "512": "Devlin et al. (2019), appendix A.2: sequences of at most 512 tokens",
        "3e-4": "benchmarks/history.md, the search on seeds 10-14: BERT's linear schedule at peaks 1e-3 and 3e-4",
        "600": "the command line's step budget for train --task mlm (its --help; MaskedLMTask.settings)",
        "2021": "Schick and Schuetze (2021), PET; Gao et al. (2021), LM-BFF",
        "1,000,000": "Devlin et al. (2019), appendix A.2: 1,000,000 steps of 256 sequences of 512 tokens",
        "256": "Devlin et al. (2019), appendix A.2: batches of 256 sequences",
        "40": "Devlin et al. (2019), appendix A.2: 'approximately 40 epochs over the 3.3 billion word corpus'",
        "3.3": "Devlin et al. (2019), appendix A.2: the 3.3 billion word corpus",
        "50": "the tutorial (course document 001): 'roughly 50 epochs of the 3.3 billion word corpus'",
        "128,000": "arithmetic of the prose: 256 sequences of 512 tokens a step",
        "128": "arithmetic of the prose: 128,000 tokens a step for 1,000,000 steps, 128 billion tokens",
        "39": "arithmetic of the prose: 128 billion tokens over 3.3 billion words",
    },
    "13": {
        "90": "the text task's split (tasks/text.py, held_out_share=0.1): the first 90% of the characters to train on",
        "100,000": "the code of the cell below it: train_text[:100_000]",
        "37,000": "the paper, section 5.1: English-German, byte-pair encoding, a shared vocabulary of about 37000 tokens",
        "32,000": "the paper, section 5.1: English-French, a 32000 word-piece vocabulary",
        "1,881": "benchmarks/results/text_tokenizers.json (the story by BPE: training_tokens), which docs/results/tokenizers.md quotes",
    },
    "15": {
        "15": "the notebook's own number, in its title",
        "0.1": "sacrebleu's default value for 'floor' smoothing (Chen and Cherry, 2014; tt.metrics.SMOOTHING)",
        "1.8": "Post (2018), 'A Call for Clarity in Reporting BLEU Scores': differences as high as 1.8 BLEU",
        "2018": "Post (2018), 'A Call for Clarity in Reporting BLEU Scores', which introduced sacrebleu",
        "32000": "the paper, section 5.1: EN-FR in a 32000 word-piece vocabulary; the slides: '32000 unique words'",
    },
    "16": {
        "1.3": "Dosovitskiy et al. (2021), ViT, section 4.1: ImageNet, 1.3 million images",
        "14": "Dosovitskiy et al. (2021), ViT, section 4.1: ImageNet-21k, 14 million images",
        "300": "Dosovitskiy et al. (2021), ViT, section 4.1: JFT, 303 million images, called JFT-300M",
    },
    "17": {
        "17": "the notebook's own number, in its title",
        "2017": "the paper: Vaswani et al. (2017), 'Attention Is All You Need'",
        "2019": "Zhang and Sennrich (2019), 'Root Mean Square Layer Normalization'; Loshchilov and Hutter (2019), "
                "'Decoupled Weight Decay Regularization'",
        "2020": "Shazeer (2020), 'GLU Variants Improve Transformer'",
    },
    "18": {
        "18": "the notebook's own number, in its title",
        "2023": "Dao (2023), 'FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning'",
    },
}
