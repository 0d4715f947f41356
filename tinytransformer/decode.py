"""Turn a trained model into output sequences: greedy, sampling, beam search.

One loop serves every model that generates. For the encoder-decoder
Transformer, ids is the source batch: it is encoded once and every row starts
from BOS. For GPT, ids is the prompt (B, T_prompt) and every row continues it.
Either way the model then adds one token at a time, all rows (and beams) of
the batch together. A row that has produced EOS is finished: it gets PAD from
then on. PAD and BOS are never chosen as a next token (whatever the logits say):
a row is its tokens, then EOS, then PAD. The result holds the new tokens only
(no BOS, no prompt):

    ids = greedy(model, src_ids, max_len)      # (B, <= max_len)
    ids = greedy(gpt, prompt_ids, max_len)     # (B, <= max_len), what follows the prompt

EOS, PAD and the ids never chosen are the library's toy vocabulary's (Specials,
TOY); a published model's tokenizer has its own (specials=Specials(pad, eos, never)).

Decoding runs in eval mode (dropout off) and outside any Tape: nothing is
recorded, nothing is kept for a backward pass. The model reads its first
tokens plus all but the last new one, so BOS (or the prompt) plus max_len - 1
new tokens must fit in the model's config.max_len.

Why a key/value cache gives the same numbers. The decoder is causal: position
i attends only to positions <= i, so its keys and values in every layer depend
on tokens 0..i alone and never change once computed (dropout is off, so
recomputing them would give the very same numbers). Each step therefore runs
the decoder on the newest token only and reads the keys and values of the
earlier ones from a KVCache; the encoder output's keys and values are computed
once. T steps run the decoder on T positions in all (GPT's first step: its whole prompt), instead of
1 + 2 + ... + T = T(T + 1)/2 without the cache. use_cache=False re-runs the
whole prefix every step: the reference the tests compare with.
"""
import typing

import numpy as np

from . import functional as F
from .nn.module import inference
from .ops.checks import check_finite, check_integer
from .vocabulary import BOS, EOS, PAD


class Specials(typing.NamedTuple):
    """The ids decoding treats apart: pad fills a row after its eos, which ends it; never are never chosen."""
    pad: int
    eos: int
    never: tuple


TOY = Specials(PAD, EOS, (PAD, BOS))     # the library's own vocabulary (vocabulary.py)


def start(model, ids, max_len, name, repeat=1):
    """What every decoding loop begins with -> (prefix, decoder).

    prefix (B * repeat, t0): the tokens the model reads before its first new one
    (BOS for an encoder-decoder, the prompt for a decoder-only model); row
    b * repeat + r is a copy of row b (beam search's beams). decoder(ids, cache)
    -> logits (N, t, V) runs the model's decoder on ids, the positions after the
    cache's (all of them without a cache).
    """
    if not hasattr(model, "decode"):
        raise TypeError(f"{name}: a {type(model).__name__} does not generate (it has no decoder); "
                        "use a Transformer or a GPT")
    check_integer(name, "max_len", max_len, 1)
    encoder_decoder = hasattr(model, "encode")
    if not encoder_decoder:
        model.check_input(ids, "prompt")
    if np.ndim(ids) == 2 and np.shape(ids)[1] == 0:
        what = "source (B, T_src >= 1)" if encoder_decoder else "prompt (B, T_prompt >= 1)"
        raise ValueError(f"{name}: the {what.split()[0]} is empty; give at least one token: {what}")
    t0 = 1 if encoder_decoder else ids.shape[1]
    room = model.config.max_len - t0 + 1           # the last new token is never read back
    if not 1 <= max_len <= room:
        raise ValueError(f"{name}: max_len must be between 1 and {room} (the model's max_len "
                         f"{model.config.max_len} holds {t0} starting token(s) and max_len - 1 new ones), "
                         f"got {max_len}")
    if not encoder_decoder:                        # decoder-only: continue the prompt
        return np.repeat(ids, repeat, axis=0), model.decode                # (B * repeat, T_prompt)
    memory, src_keep = model.encode(ids)           # encoder-decoder: encode once, start from BOS
    memory, src_keep = np.repeat(memory.data, repeat, axis=0), np.repeat(src_keep, repeat, axis=0)
    # memory (B * repeat, T_src, d_model), src_keep (B * repeat, 1, T_src)

    def decoder(new, cache):
        return model.decode(new, memory, src_keep, cache)

    return np.full((len(ids) * repeat, 1), BOS, dtype=np.int64), decoder   # (B * repeat, 1)


def next_token_logits(decoder, ids, cache=None, never=TOY.never):
    """Logits (N, V) of the token that follows each row of ids (N, t); -inf for the ids never chosen.

    With a KVCache, the decoder runs only on the positions the cache has not
    seen (in the loops below: the newest token, or the whole prompt at first)
    and the cache grows by them. Without one, it re-runs the whole prefix.
    """
    new = ids if cache is None else ids[:, cache.length:]
    logits = decoder(new, cache).data[:, -1].copy()                           # (N, V)
    logits[:, list(never)] = -np.inf                                          # (toy: PAD and BOS) never come next
    return logits


def token_by_token(model, ids, max_len, choose, name, use_cache=True, specials=TOY, each_step=None):
    """The loop greedy and sample share; choose(logits (B, V)) -> next ids (B,).

    each_step(token (B,), logprob (B,)): called after each step with the new tokens and their natural-log
    probability under the model (before any temperature or truncation), as they come."""
    with inference(model, name):
        ids, decoder = start(model, ids, max_len, name)                 # (B, t0)
        t0 = ids.shape[1]
        cache = model.new_cache() if use_cache else None
        finished = np.zeros(len(ids), dtype=bool)                       # (B,)
        for _ in range(max_len):
            logits = next_token_logits(decoder, ids, cache, specials.never)   # (B, V)
            token = np.where(finished, specials.pad, choose(logits))    # (B,)
            ids = np.concatenate([ids, token[:, None]], axis=1)         # (B, t + 1)
            finished |= token == specials.eos
            if each_step is not None:
                logprob = F.log_softmax(logits.astype(np.float64)).data
                each_step(token, logprob[np.arange(len(token)), token])
            if finished.all():
                break
    return ids[:, t0:]                                                  # (B, <= max_len)


def greedy(model, ids, max_len, use_cache=True, specials=TOY, each_step=None):
    """Always take the most likely next token. ids (B, T_src or T_prompt) -> new ids (B, <= max_len).
    specials, each_step: as token_by_token."""
    return token_by_token(model, ids, max_len, lambda logits: logits.argmax(axis=-1), "greedy", use_cache,
                          specials, each_step)


def sample(model, ids, max_len, rng, temperature=1.0, top_k=None, use_cache=True, top_p=None, specials=TOY,
           each_step=None):
    """Draw each next token from softmax(logits / temperature), over the top_k most likely if given, and over
    the fewest most likely tokens whose probabilities add up to top_p if given (nucleus sampling).

    rng: an np.random.Generator or a seed. A small temperature approaches greedy.
    ids (B, T_src or T_prompt) -> new ids (B, <= max_len). specials, each_step: as token_by_token.
    """
    check_finite("sample", "temperature", temperature)      # NaN or inf would make every logit NaN: PAD
    if temperature <= 0:
        raise ValueError(f"sample: temperature must be > 0, got {temperature}")
    V = model.config.vocab_size
    if top_k is not None:
        check_integer("sample", "top_k", top_k, 1)
        if top_k > V:
            raise ValueError(f"sample: top_k must be between 1 and the vocabulary size {V}, got {top_k}")
    if top_p is not None and not (isinstance(top_p, (int, float)) and 0 < top_p <= 1):
        raise ValueError(f"sample: top_p must be in (0, 1], got {top_p!r}")
    if not isinstance(rng, np.random.Generator):
        check_integer("sample", "rng (a seed)", rng, 0)
    rng = np.random.default_rng(rng)

    def choose(logits):                                                 # (B, V)
        z = logits.astype(np.float64) / temperature
        if top_k is not None:
            kth_largest = np.sort(z, axis=-1)[:, -top_k, None]          # (B, 1)
            z = np.where(z >= kth_largest, z, -np.inf)
        if top_p is not None:
            z = nucleus(z, top_p)
        # Gumbel-max trick: argmax(z + Gumbel noise) is a draw from softmax(z)
        return (z + rng.gumbel(size=z.shape)).argmax(axis=-1)           # (B,)

    return token_by_token(model, ids, max_len, choose, "sample", use_cache, specials, each_step)


def nucleus(z, top_p):
    """z (B, V) with -inf for every token outside the nucleus: the most likely tokens, fewest first, whose
    probabilities under softmax(z) add up to top_p (the most likely one always kept; Holtzman et al. 2020)."""
    p = F.softmax(z).data                                                # (B, V)
    order = np.argsort(-p, axis=-1, kind="stable")                       # most likely first
    before = np.cumsum(np.take_along_axis(p, order, axis=-1), axis=-1) - np.take_along_axis(p, order, axis=-1)
    keep = np.zeros_like(p, dtype=bool)
    np.put_along_axis(keep, order, before < top_p, axis=-1)              # what came before it is short of top_p
    return np.where(keep, z, -np.inf)


def length_normalised(score, length, alpha):
    """GNMT's length penalty (Wu et al., 2016), used by the paper with alpha = 0.6:
    score / ((5 + length) / 6) ** alpha. alpha = 0 ranks by log-probability alone."""
    return score / ((5.0 + length) / 6.0) ** alpha


def beam_search(model, ids, max_len, beam_width=4, length_penalty=0.6, use_cache=True):
    """Keep the beam_width most likely prefixes of every row; return the best hypothesis.

    A hypothesis that has produced EOS is finished: it stays in the beam,
    extended by PAD at no cost, and competes with the unfinished ones by
    log-probability. At the end each row's hypotheses are ranked by
    log-probability / ((5 + length) / 6) ** length_penalty (the paper: beam 4,
    penalty 0.6). Width 1 is greedy. ids (B, T_src or T_prompt) -> new ids (B, <= max_len).

    Row b*K + k of the decoder's batch is beam k of source row b. When the
    beams are re-ranked, the cache's rows are reordered to match: a new beam
    continues the keys and values of the prefix it extends.
    """
    check_integer("beam_search", "beam_width", beam_width, 1)
    check_finite("beam_search", "length_penalty", length_penalty)
    K = beam_width
    with inference(model, "beam_search"):
        prefix, decoder = start(model, ids, max_len, "beam_search", repeat=K)   # (B*K, t0): row b's beams together
        B, V, t0 = len(ids), model.config.vocab_size, prefix.shape[1]
        cache = model.new_cache() if use_cache else None
        ids = prefix.reshape(B, K, t0)                                  # (B, K, t0)
        score = np.full((B, K), -np.inf)                                # (B, K) sum of log-probabilities
        score[:, 0] = 0.0                   # one live beam at first, so the K beams do not start identical
        finished = np.zeros((B, K), dtype=bool)                         # (B, K)
        # a finished hypothesis may only continue with PAD, at log-probability 0
        pad_only = np.where(np.arange(V) == PAD, 0.0, -np.inf)          # (V,)
        for _ in range(max_len):
            logits = next_token_logits(decoder, ids.reshape(B * K, -1), cache)
            logp = F.log_softmax(logits.astype(np.float64)).data.reshape(B, K, V)   # (B, K, V)
            logp = np.where(finished[..., None], pad_only, logp)
            candidates = (score[..., None] + logp).reshape(B, K * V)   # (B, K*V) every one-token extension
            best = np.argsort(-candidates, axis=-1, kind="stable")[:, :K]   # (B, K)
            beam, token = best // V, best % V                           # (B, K) which prefix, which token
            ids = np.concatenate([np.take_along_axis(ids, beam[..., None], axis=1), token[..., None]],
                                 axis=2)                                # (B, K, t + 1)
            finished = np.take_along_axis(finished, beam, axis=1) | (token == EOS)
            score = np.take_along_axis(candidates, best, axis=1)
            if cache is not None:
                cache.select((np.arange(B)[:, None] * K + beam).reshape(-1))   # (B*K,) the rows extended
            if finished.all():
                break
    length = (ids[..., t0:] != PAD).sum(axis=-1)                        # (B, K) tokens up to EOS
    winner = length_normalised(score, length, length_penalty).argmax(axis=1)   # (B,)
    chosen = ids[np.arange(B), winner, t0:]                             # (B, t) the new tokens
    return chosen[:, :max(1, length[np.arange(B), winner].max())]       # (B, <= max_len) no all-PAD tail
