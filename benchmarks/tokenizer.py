"""How fast the tokenizers are: BPE training to 1024 tokens on 200 KB of text, and encoding speed.

    python benchmarks/tokenizer.py [--kb 200] [--vocab-size 1024] [--repeats 5] [--naive-without-pre-split]

Prints, each as the median of --repeats runs (the naive trainer runs once):
- training, incremental (what BPE.train does) against naive (recount every pair after every merge:
  tokenizer.learn_merges_naive), with GPT-2's pre-split and without it; the merges must be equal;
- encoding: a fresh tokenizer (empty cache), the same text again (every chunk cached), and no cache at
  all (every chunk merged again, also the repeated ones), on the training text and on held-out text;
- Hugging Face `tokenizers` (Rust) trained on the same text with the same vocabulary size, if installed:
  its training and encoding speed, and bytes per token of both on the training and the held-out text;
- encoding a file lazily: encode_iterable against encode on --stream-copies copies of the held-out text,
  its speed (median of --repeats) and its peak memory (tracemalloc, one run each; traced runs are slower);
- reading hostile tokenizer files (tokenizer/saved_file.py): the seconds and peak memory to refuse a file
  nested 200,000 deep, 60 chained merges that double each token, and files of the largest size allowed
  (8 MiB) made of empty lists, of numbers, or of quotes never closed: the most an untrusted file can cost.
Every number printed is recorded in benchmarks/results/tokenizer.json (the book's tokenizers page quotes it).

The text is Python's own documentation of the language (pydoc_data.topics, in every Python install):
its first --kb kilobytes (topics in sorted order) to train on, the next --kb to hold out. It differs
from one Python version to the next, so the version is printed with the results.
Targets: training under 10 s, encoding at least 200 KB/s, on a 2-core machine.
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import sys
import tempfile
import time
import tracemalloc

import pydoc_data.topics

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from common import load_average, median_seconds as seconds, write_record  # noqa: E402
from tinytransformer.tokenizer import BPE, SPLIT_PATTERN, learn_merges, learn_merges_naive  # noqa: E402
from tinytransformer.tokenizer.bpe import chunk_counts  # noqa: E402
from tinytransformer.tokenizer.incremental import apply_merges  # noqa: E402
from tinytransformer.tokenizer.saved_file import MAX_FILE_BYTES  # noqa: E402
from tinytransformer.tokenizer.split import compile_pattern, split_text  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent / "results" / "tokenizer.json"


def corpus(kb):
    """The first kb kilobytes of the topics (UTF-8, cut at a character), and the next kb."""
    data = "".join(pydoc_data.topics.topics[name] for name in sorted(pydoc_data.topics.topics)).encode("utf-8")
    n = kb * 1000
    if len(data) < 2 * n:
        raise SystemExit(f"tokenizer benchmark: the topics have {len(data)} bytes, fewer than 2 x {n}")
    return data[:n].decode("utf-8", errors="ignore"), data[n:2 * n].decode("utf-8", errors="ignore")


def training(text, vocab_size, repeats, naive_without_pre_split):
    n_merges = vocab_size - 256
    print(f"training to {vocab_size} tokens ({n_merges} merges):")
    print(f"  {'pre-split':<22}{'algorithm':<14}{'seconds':>9}   same merges")
    record = {}
    for pattern, name in ((SPLIT_PATTERN, "GPT-2's"), (None, "none")):
        counts = chunk_counts(text, compile_pattern(pattern, "benchmark"))
        chunks, weights = list(counts), list(counts.values())
        fast, merges = seconds(lambda: learn_merges(chunks, weights, n_merges), repeats)
        whole, _ = seconds(lambda: BPE.train(text, vocab_size, pattern=pattern), repeats)
        print(f"  {name:<22}{'incremental':<14}{fast:>9.3f}   (BPE.train end to end, splitting too: {whole:.3f} s)")
        record[name] = {"incremental_seconds": fast, "bpe_train_seconds": whole}
        if pattern is None and not naive_without_pre_split:
            print(f"  {name:<22}{'naive':<14}{'skipped':>9}   (--naive-without-pre-split: minutes)")
            continue
        slow, naive = seconds(lambda: learn_merges_naive(chunks, weights, n_merges), 1)
        print(f"  {name:<22}{'naive':<14}{slow:>9.3f}   {naive == merges}   ({slow / fast:.0f}x the incremental)")
        record[name].update(naive_seconds=slow, same_merges=naive == merges)
    return record


def encoding(text, held_out, vocab_size, repeats):
    tok = BPE.train(text, vocab_size)
    kb = len(text.encode("utf-8")) / 1000
    print(f"\nencoding with {tok} ({kb:.0f} KB each):")
    record = {"kb": kb}
    for name, part in (("training text", text), ("held-out text", held_out)):
        fresh, _ = seconds(lambda: BPE(list(tok.merges)).encode(part), repeats)
        tok.encode(part)
        warm, _ = seconds(lambda: tok.encode(part), repeats)
        compiled = compile_pattern(SPLIT_PATTERN, "benchmark")
        uncached, _ = seconds(lambda: apply_merges([c.encode("utf-8") for c in split_text(part, compiled)],
                                                   tok.merges), repeats)
        chunks = split_text(part, compiled)
        print(f"  {name}: {len(chunks)} chunks, {len(set(chunks))} distinct")
        for label, s in (("fresh tokenizer (cache empty)", fresh), ("again (every chunk cached)", warm),
                         ("no cache (repeated chunks merged again)", uncached)):
            print(f"    {label:<42}{s:>7.3f} s  {kb / s:>8.0f} KB/s")
        record[name] = {"chunks": len(chunks), "distinct_chunks": len(set(chunks)),
                        "kb_per_second": {"fresh": kb / fresh, "cached": kb / warm, "no_cache": kb / uncached}}
    return tok, record


def hugging_face(text, held_out, vocab_size, repeats, tok):
    try:
        import tokenizers
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError:
        print("\nHugging Face tokenizers is not installed (pip install tokenizers): comparison skipped")
        return None

    def train():
        hf = Tokenizer(models.BPE())
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)     # GPT-2's regex, then bytes
        hf.decoder = decoders.ByteLevel()
        hf.train_from_iterator([text], trainers.BpeTrainer(
            vocab_size=vocab_size, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        return hf

    train_s, hf = seconds(train, repeats)
    threads = os.environ.get("RAYON_NUM_THREADS", "all cores")
    print(f"\nHugging Face tokenizers {tokenizers.__version__} (Rust; threads: {threads}), "
          f"vocabulary {hf.get_vocab_size()}:")
    ours_s = seconds(lambda: BPE.train(text, vocab_size), repeats)[0]
    print(f"  training {train_s:.3f} s, against {ours_s:.3f} s here")
    kb = len(text.encode("utf-8")) / 1000
    hf_encode, _ = seconds(lambda: hf.encode(text).ids, repeats)
    fresh, _ = seconds(lambda: BPE(list(tok.merges)).encode(text), repeats)
    print(f"  encoding the training text: {kb / hf_encode:.0f} KB/s, against {kb / fresh:.0f} KB/s here "
          f"(fresh tokenizer)")
    ours_tokens = {tok.vocab[i] for i in range(256, tok.vocab_size)}
    theirs_tokens = {gpt2_bytes(token) for token, i in hf.get_vocab().items()} - {bytes([b]) for b in range(256)}
    print(f"  learned tokens in both vocabularies: {len(ours_tokens & theirs_tokens)} of {len(ours_tokens)}")
    record = {"version": tokenizers.__version__, "threads": threads, "training_seconds": train_s,
              "training_seconds_here": ours_s, "encode_kb_per_second": kb / hf_encode,
              "encode_kb_per_second_here": kb / fresh, "learned_tokens_shared": len(ours_tokens & theirs_tokens),
              "learned_tokens": len(ours_tokens), "bytes_per_token": {}}
    print(f"  {'bytes per token':<22}{'tinytransformer':>16}{'Hugging Face':>14}")
    for name, part in (("training text", text), ("held-out text", held_out)):
        n_bytes = len(part.encode("utf-8"))
        ours, theirs = len(tok.encode(part)), len(hf.encode(part).ids)
        assert hf.decode(hf.encode(part).ids) == part and tok.decode(tok.encode(part)) == part
        print(f"  {name:<22}{n_bytes / ours:>16.3f}{n_bytes / theirs:>14.3f}")
        record["bytes_per_token"][name] = {"here": n_bytes / ours, "hugging_face": n_bytes / theirs}
    return record


def gpt2_bytes(token):
    """The bytes of a byte-level token as GPT-2 writes it: each byte one printable character (bytes that
    print as themselves keep their character; the others take 256, 257, ... in order)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    others = [b for b in range(256) if b not in printable]
    char_to_byte = {chr(b): b for b in printable} | {chr(256 + n): b for n, b in enumerate(others)}
    return bytes(char_to_byte[c] for c in token)


def peak_memory(fn):
    """(seconds, peak bytes traced by tracemalloc, fn's result) of one call of fn."""
    tracemalloc.start()
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak, result


def streaming(held_out, tok, copies, repeats):
    lines = held_out.splitlines(keepends=True)
    kb = copies * len(held_out.encode("utf-8")) / 1000

    def stream():
        return (line for _ in range(copies) for line in lines)     # the text a line at a time, never whole

    def count(ids):
        return sum(1 for _ in ids)

    print(f"\nencoding {kb:.0f} KB ({copies} copies of the held-out text, {copies * len(lines)} lines):")
    whole_s, whole_ids = seconds(lambda: BPE(list(tok.merges)).encode("".join(stream())), repeats)
    lazy_s, n_lazy = seconds(lambda: count(BPE(list(tok.merges)).encode_iterable(stream())), repeats)
    assert n_lazy == len(whole_ids)
    _, whole_peak, _ = peak_memory(lambda: BPE(list(tok.merges)).encode("".join(stream())))
    _, lazy_peak, same = peak_memory(lambda: list(BPE(list(tok.merges)).encode_iterable(stream())) == whole_ids)
    _, lazy_count_peak, _ = peak_memory(lambda: count(BPE(list(tok.merges)).encode_iterable(stream())))
    print(f"  {'':<44}{'seconds':>8}{'KB/s':>8}{'peak MB':>10}")
    print(f"  {'encode (the whole text as one str)':<44}{whole_s:>8.3f}{kb / whole_s:>8.0f}{whole_peak / 1e6:>10.2f}")
    print(f"  {'encode_iterable, ids counted as they come':<44}{lazy_s:>8.3f}{kb / lazy_s:>8.0f}"
          f"{lazy_count_peak / 1e6:>10.2f}")
    print(f"  {'encode_iterable, ids kept in a list':<44}{'':>8}{'':>8}{lazy_peak / 1e6:>10.2f}   same ids: {same}")
    return {"kb": kb, "lines": copies * len(lines),
            "encode": {"seconds": whole_s, "kb_per_second": kb / whole_s, "peak_mb": whole_peak / 1e6},
            "encode_iterable_counted": {"seconds": lazy_s, "kb_per_second": kb / lazy_s,
                                        "peak_mb": lazy_count_peak / 1e6},
            "encode_iterable_kept": {"peak_mb": lazy_peak / 1e6}, "same_ids": same}


def hostile_files():
    print("\nrefusing hostile tokenizer files (one run each; peak traced memory):")
    record = {}
    with tempfile.TemporaryDirectory() as folder:
        deep, chained, lists, numbers, quotes = (os.path.join(folder, f"{name}.json") for name in
                                                  ("deep", "chained", "lists", "numbers", "quotes"))
        with open(deep, "w") as f:
            f.write('{"format": ' + "[" * 200_000 + "]" * 200_000 + "}")
        BPE([]).save(chained)
        with open(chained) as f:
            data = json.load(f)
        data["merges"] = [[97, 97, "aa"]] + [[256 + i, 256 + i, "aaaa"] for i in range(59)]    # each doubles
        with open(chained, "w") as f:
            json.dump(data, f)
        n = (MAX_FILE_BYTES - 2) // 5
        for path, item in ((lists, "[], "), (numbers, "1000,"), (quotes, '\\"\\"')):
            with open(path, "w") as f:
                f.write("[" + item * n + "1]")
        for name, path in (("nested 200,000 deep", deep), ("60 chained merges", chained),
                           ("8 MiB of empty lists", lists), ("8 MiB of numbers", numbers),
                           ("8 MiB of quotes never closed", quotes)):
            def refuse():
                try:
                    BPE.load(path)
                except ValueError as error:
                    return str(error).replace(folder + os.sep, "")
            s, peak, message = peak_memory(refuse)
            print(f"  {name:<30}{s:>7.3f} s {peak / 1e6:>8.1f} MB   {message[:90]}")
            record[name] = {"seconds": s, "peak_mb": peak / 1e6, "refused_with": message}
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=200, help="kilobytes to train on (and as many held out)")
    parser.add_argument("--vocab-size", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5, help="runs of each measurement (the median is printed)")
    parser.add_argument("--naive-without-pre-split", action="store_true",
                        help="also time the naive trainer on the text as one chunk (takes minutes)")
    parser.add_argument("--stream-copies", type=int, default=5,
                        help="copies of the held-out text that encode_iterable reads a line at a time")
    args = parser.parse_args()
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "python": platform.python_version(), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
              "load_at_start": load_average(), "kb": args.kb, "vocab_size": args.vocab_size,
              "repeats": args.repeats}
    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores; "
          f"load average {record['load_at_start']} at the start")
    text, held_out = corpus(args.kb)
    print(f"text: pydoc_data.topics, {len(text.encode('utf-8'))} bytes to train on, "
          f"{len(held_out.encode('utf-8'))} held out\n")
    record["training"] = training(text, args.vocab_size, args.repeats, args.naive_without_pre_split)
    tok, record["encoding"] = encoding(text, held_out, args.vocab_size, args.repeats)
    record["hugging_face"] = hugging_face(text, held_out, args.vocab_size, args.repeats, tok)
    record["streaming"] = streaming(held_out, tok, args.stream_copies, args.repeats)
    record["hostile_files"] = hostile_files()
    record["load_at_end"] = load_average()
    print(f"\nload average {record['load_at_end']} at the end")
    write_record(OUT, record)


if __name__ == "__main__":
    main()
