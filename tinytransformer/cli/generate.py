"""`python -m tinytransformer generate --weights smollm2-135m-instruct "PROMPT"`: a published language model,
run by the library's own GPT, continues a prompt (greedy, or sampled), printing the tokens as they come."""
import json
import sys

import numpy as np

from ..decode import greedy, sample
from ..files import check_outputs, json_keys, write_output
from .common import BadInput, say, seed
from .weights import loaded


def add_parser(commands):
    """Add the generate command to the command line's commands."""
    parser = commands.add_parser(
        "generate", help="continue a prompt with a published language model (tt.load_pretrained)",
        description="Continue PROMPT with a published language model run by the library's own GPT, with the "
                    "key/value cache: greedy unless --temperature, --top-k or --top-p asks for sampling. The "
                    "new text is printed as it comes; generation stops at the model's end-of-text token.")
    parser.add_argument("prompt", metavar="PROMPT", help="the text to continue (with --chat: the user's message)")
    parser.add_argument("--weights", required=True, metavar="NAME|FILE.gguf",
                        help="smollm2-135m-instruct (fetched once into $TINYTRANSFORMER_CACHE, else "
                             "~/.cache/tinytransformer) or a LLaMA-style .gguf file")
    parser.add_argument("--max-new-tokens", type=int, default=64, metavar="N", help="at most N new tokens (64)")
    parser.add_argument("--temperature", type=float, metavar="T", help="sample from softmax(logits / T)")
    parser.add_argument("--top-k", type=int, metavar="K", help="sample among the K most likely tokens")
    parser.add_argument("--top-p", type=float, metavar="P",
                        help="sample among the fewest most likely tokens whose probabilities add up to P")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the sampling (0)")
    parser.add_argument("--chat", action="store_true", help="wrap PROMPT in the model's chat template")
    parser.add_argument("--json", metavar="PATH", help="write prompt_ids, ids, logprobs (natural log, before "
                                                       "temperature or truncation) and text to PATH")
    parser.set_defaults(run=generate_command)


def generate_command(args):
    """Run generate: the prompt continued, printed as it comes, and --json if asked."""
    sampling = args.temperature is not None or args.top_k is not None or args.top_p is not None
    if args.max_new_tokens < 1:
        raise BadInput(f"--max-new-tokens must be at least 1, got {args.max_new_tokens}")
    check_outputs({"--json": args.json}, {"--json": (".json",)}, is_ours={"--json": is_generate_json})
    model, tokenizer = loaded(args.weights, "a language model (.gguf)", lambda m: hasattr(m, "new_cache"))
    try:
        text = tokenizer.chat_prompt(args.prompt) if args.chat else args.prompt
    except ValueError as error:
        raise BadInput(f"--chat: {error}") from None
    prompt_ids = tokenizer.encode(text, allowed_special="all" if args.chat else ())
    if not prompt_ids:
        raise BadInput("the prompt is empty; give some text to continue")
    ids, logprobs, shown = [], [], [""]

    def each_step(token, logprob):
        ids.append(int(token[0]))
        logprobs.append(float(logprob[0]))
        text = tokenizer.decode(ids)
        if not text.endswith("\ufffd"):                         # a character still cut in two waits for its bytes
            sys.stdout.write(text[len(shown[0]):])
            sys.stdout.flush()
            shown[0] = text

    options = dict(specials=tokenizer.specials, each_step=each_step)
    try:
        if sampling:
            sample(model, np.array([prompt_ids]), args.max_new_tokens, args.seed, temperature=args.temperature or 1.0,
                   top_k=args.top_k, top_p=args.top_p, **options)
        else:
            greedy(model, np.array([prompt_ids]), args.max_new_tokens, **options)
    except ValueError as error:
        raise BadInput(str(error)) from None
    text = tokenizer.decode(ids)
    say(text[len(shown[0]):])
    if args.json:
        record = {"prompt_ids": prompt_ids, "ids": ids, "logprobs": logprobs, "text": text}
        write_output("--json", args.json, lambda f: f.write(json.dumps(record).encode("utf-8")),
                     is_ours=is_generate_json)
    return 0


def is_generate_json(path):
    """True if path holds a JSON file this command wrote (replaced without asking)."""
    return {"prompt_ids", "ids", "logprobs", "text"} <= json_keys(path)
