"""The command line, one module per command; __main__.py only dispatches.

    train.py        python -m tinytransformer train --task reverse ...
    train_flags.py  train's options, read from where each is declared (tasks/options.py), and their help
    train_outputs.py  the files train writes (--save, --json, --plot): checked first, written atomically
    translate.py    python -m tinytransformer translate --load MODEL.npz "the old dog sees the small cat"
    check.py        python -m tinytransformer check [--ops NAME[,NAME]]
    assignment.py   python -m tinytransformer assignment DIR
    grade.py        python -m tinytransformer grade SUBMISSION...
    handin.py       python -m tinytransformer handin: the zip a student uploads
    generate.py     python -m tinytransformer generate --weights smollm2-135m-instruct "PROMPT"
    embed.py        python -m tinytransformer embed --weights all-minilm-l6-v2 "SENTENCE" ...
    weights.py      what generate and embed share: the --weights model loaded
    common.py       what every command shares: BadInput, the one-line Parser
"""
