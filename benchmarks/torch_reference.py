"""The PyTorch reference for the speed benchmarks: the same Transformer, in torch.

This file rebuilds, in PyTorch (eager mode, float32), exactly the model that
tinytransformer builds in NumPy, so both can be timed on the same
configuration: the same shared embedding table, the same initialisation,
post-LN or pre-LN, the same loss, Adam with the paper's warmup schedule, the
same toy tasks (from tinytransformer.tasks.sequences) and the same greedy exact-match
evaluation. It is a benchmark, not part of the package: torch is never a
dependency of tinytransformer.

It has no command line of its own: benchmarks/step_time.py,
benchmarks/time_to_accuracy.py and benchmarks/scaling.py (which also races
its GPT, GPT-2's block, on the text task) import it when torch is installed.

Shapes: B batch, T time (T_q, T_k where they differ), V vocabulary,
h heads, d_k = d_model // h.
"""
import math
import sys
import time

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("benchmarks/torch_reference.py needs PyTorch, which tinytransformer itself "
             "does not depend on. Install it for the benchmark only: "
             "pip install torch --index-url https://download.pytorch.org/whl/cpu")

from tinytransformer.tasks.sequences import make_batch, vocab_size_for
from tinytransformer.vocabulary import BOS, EOS, PAD

# The classroom configuration: the one the course trains in class.
CLASSROOM_TASK = dict(task="reverse", seq_len=10, n_symbols=10, batch_size=64)
CLASSROOM_MODEL = dict(vocab_size=vocab_size_for(10), d_model=64, n_heads=4, n_layers=2,
                       d_ff=128, max_len=64, dropout=0.0, norm_first=False,
                       tie_embeddings=True)


# ---------------------------------------------------------------------------
# Layers, small to large. Every weight is created here by hand (not with
# torch.nn.Linear) so that the layout and the initialisation match
# tinytransformer: W has shape (d_in, d_out) and y = x @ W + b.

class Linear(torch.nn.Module):
    """y = x @ W + b, W of shape (d_in, d_out), Xavier-uniform W, zero b."""

    def __init__(self, d_in, d_out, generator, bias=True):
        super().__init__()
        a = math.sqrt(6.0 / (d_in + d_out))
        W = torch.empty(d_in, d_out).uniform_(-a, a, generator=generator)
        self.W = torch.nn.Parameter(W)
        self.b = torch.nn.Parameter(torch.zeros(d_out)) if bias else None

    def forward(self, x):
        # F.linear computes x @ weight.T + b in one fused call (addmm), so
        # passing W.T gives x @ W + b; this is what torch.nn.Linear runs too.
        return F.linear(x, self.W.T, self.b)                    # (..., d_out)


class LayerNorm(torch.nn.Module):
    """Normalise over the last axis (biased variance, eps inside the sqrt)."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.ones(d_model))
        self.beta = torch.nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.gamma, self.beta, self.eps)


def attention(q, k, v, keep):
    """softmax(q k^T / sqrt(d_k)) v by torch's fused scaled_dot_product_attention,
    its fastest on this CPU. q: (B, h, T_q, d_k), k and v: (B, h, T_k, d_k).

    Its boolean mask has the same meaning (True = may attend), and since
    torch 2.5 a fully masked row gives zeros there too.
    """
    return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)  # (B, h, T_q, d_k)



class MultiHeadAttention(torch.nn.Module):
    """Separate W_q, W_k, W_v, W_o, each (d_model, d_model) with a bias."""

    def __init__(self, d_model, n_heads, generator):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"MultiHeadAttention: d_model={d_model} is not divisible "
                             f"by n_heads={n_heads}")
        self.n_heads = n_heads
        self.W_q = Linear(d_model, d_model, generator)
        self.W_k = Linear(d_model, d_model, generator)
        self.W_v = Linear(d_model, d_model, generator)
        self.W_o = Linear(d_model, d_model, generator)

    def split_heads(self, x):
        B, T, d_model = x.shape
        x = x.reshape(B, T, self.n_heads, d_model // self.n_heads)  # (B, T, h, d_k)
        return x.transpose(1, 2)                                    # (B, h, T, d_k)

    def forward(self, x_q, x_kv, keep):
        """x_q: (B, T_q, d_model) queries, x_kv: (B, T_k, d_model) keys and values."""
        q = self.split_heads(self.W_q(x_q))                     # (B, h, T_q, d_k)
        k = self.split_heads(self.W_k(x_kv))                    # (B, h, T_k, d_k)
        v = self.split_heads(self.W_v(x_kv))                    # (B, h, T_k, d_k)
        out = attention(q, k, v, keep)                          # (B, h, T_q, d_k)
        B, h, T_q, d_k = out.shape
        out = out.transpose(1, 2).reshape(B, T_q, h * d_k)      # (B, T_q, d_model)
        return self.W_o(out)                                    # (B, T_q, d_model)


# the feed-forward activations by config["activation"]; GELU in its tanh form, as tinytransformer's (GPT-2's)
ACTIVATIONS = {"relu": torch.relu, "gelu": lambda x: F.gelu(x, approximate="tanh")}


class FeedForward(torch.nn.Module):
    """Linear(d_model, d_ff) -> ReLU (or GELU) -> Linear(d_ff, d_model)."""

    def __init__(self, d_model, d_ff, generator, activation="relu"):
        super().__init__()
        self.linear1 = Linear(d_model, d_ff, generator)
        self.linear2 = Linear(d_ff, d_model, generator)
        self.activation = ACTIVATIONS[activation]

    def forward(self, x):
        return self.linear2(self.activation(self.linear1(x)))   # (B, T, d_model)


class Residual(torch.nn.Module):
    """A sublayer wrapped in dropout, the residual add and a LayerNorm.

    post-LN (the paper): x = LN(x + dropout(sublayer(x)))
    pre-LN:             x = x + dropout(sublayer(LN(x)))
    """

    def __init__(self, d_model, dropout, norm_first):
        super().__init__()
        self.norm = LayerNorm(d_model)
        self.dropout = dropout
        self.norm_first = norm_first

    def forward(self, x, sublayer):
        if self.norm_first:
            return x + F.dropout(sublayer(self.norm(x)), self.dropout, self.training)
        return self.norm(x + F.dropout(sublayer(x), self.dropout, self.training))


class EncoderLayer(torch.nn.Module):
    def __init__(self, config, generator):
        super().__init__()
        d_model = config["d_model"]
        self.self_attention = MultiHeadAttention(d_model, config["n_heads"], generator)
        self.feed_forward = FeedForward(d_model, config["d_ff"], generator, config.get("activation", "relu"))
        self.residual1 = Residual(d_model, config["dropout"], config["norm_first"])
        self.residual2 = Residual(d_model, config["dropout"], config["norm_first"])

    def forward(self, x, src_keep):
        x = self.residual1(x, lambda x: self.self_attention(x, x, src_keep))
        return self.residual2(x, self.feed_forward)             # (B, T_src, d_model)


class DecoderLayer(torch.nn.Module):
    def __init__(self, config, generator):
        super().__init__()
        d_model, n_heads = config["d_model"], config["n_heads"]
        self.self_attention = MultiHeadAttention(d_model, n_heads, generator)
        self.cross_attention = MultiHeadAttention(d_model, n_heads, generator)
        self.feed_forward = FeedForward(d_model, config["d_ff"], generator)
        self.residual1 = Residual(d_model, config["dropout"], config["norm_first"])
        self.residual2 = Residual(d_model, config["dropout"], config["norm_first"])
        self.residual3 = Residual(d_model, config["dropout"], config["norm_first"])

    def forward(self, y, memory, tgt_keep, src_keep):
        """y: (B, T_tgt, d_model), memory: the encoder output (B, T_src, d_model)."""
        y = self.residual1(y, lambda y: self.self_attention(y, y, tgt_keep))
        y = self.residual2(y, lambda y: self.cross_attention(y, memory, src_keep))
        return self.residual3(y, self.feed_forward)             # (B, T_tgt, d_model)


def sinusoidal_positions(T, d_model):
    """P[t, 2i] = sin(t / 10000^(2i/d_model)), P[t, 2i+1] = cos(same), interleaved."""
    t = torch.arange(T, dtype=torch.float64)[:, None]           # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)    # (ceil(d_model/2),)
    angles = t / 10000.0 ** (two_i / d_model)                   # (T, ceil(d_model/2))
    P = torch.zeros(T, d_model, dtype=torch.float64)
    P[:, 0::2] = torch.sin(angles)
    P[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return P.float()                                            # (T, d_model)


class Transformer(torch.nn.Module):
    """The encoder-decoder Transformer; config is a dict of the fields of
    tinytransformer's TransformerConfig (vocab_size, d_model, n_heads, n_layers,
    d_ff, max_len, dropout, norm_first, tie_embeddings)."""

    def __init__(self, config, generator):
        super().__init__()
        V, d_model = config["vocab_size"], config["d_model"]
        self.config = dict(config)
        # one table E for the encoder input, the decoder input and (when tied) the output
        E = torch.empty(V, d_model).normal_(0.0, d_model ** -0.5, generator=generator)
        self.E = torch.nn.Parameter(E)                          # (V, d_model)
        self.register_buffer("P", sinusoidal_positions(config["max_len"], d_model))
        self.encoder_layers = torch.nn.ModuleList(
            EncoderLayer(config, generator) for _ in range(config["n_layers"]))
        self.decoder_layers = torch.nn.ModuleList(
            DecoderLayer(config, generator) for _ in range(config["n_layers"]))
        if config["norm_first"]:
            # pre-LN leaves the residual stream unnormalised: normalise it once at the end
            self.encoder_norm = LayerNorm(d_model)
            self.decoder_norm = LayerNorm(d_model)
        if not config["tie_embeddings"]:
            self.output = Linear(d_model, V, generator)

    def embed(self, ids):
        """Token embedding * sqrt(d_model) + sinusoidal positions, then dropout."""
        T = ids.shape[1]
        x = F.embedding(ids, self.E) * math.sqrt(self.config["d_model"])  # (B, T, d_model)
        x = x + self.P[:T]                                      # (B, T, d_model)
        return F.dropout(x, self.config["dropout"], self.training)

    def encode(self, src):
        """src: (B, T_src) ids -> memory (B, T_src, d_model) and src_keep (B, 1, 1, T_src)."""
        src_keep = (src != PAD)[:, None, None, :]               # (B, 1, 1, T_src) PAD keys masked
        x = self.embed(src)                                     # (B, T_src, d_model)
        for layer in self.encoder_layers:
            x = layer(x, src_keep)
        if self.config["norm_first"]:
            x = self.encoder_norm(x)
        return x, src_keep

    def decode(self, tgt_in, memory, src_keep):
        """tgt_in: (B, T_tgt) ids -> logits (B, T_tgt, V)."""
        T = tgt_in.shape[1]
        tgt_keep = torch.ones(T, T, dtype=torch.bool, device=tgt_in.device).tril()  # (T, T) causal
        y = self.embed(tgt_in)                                  # (B, T_tgt, d_model)
        for layer in self.decoder_layers:
            y = layer(y, memory, tgt_keep, src_keep)
        if self.config["norm_first"]:
            y = self.decoder_norm(y)
        if self.config["tie_embeddings"]:
            return y @ self.E.T                                 # (B, T_tgt, V)
        return self.output(y)                                   # (B, T_tgt, V)

    def forward(self, src, tgt_in):
        memory, src_keep = self.encode(src)
        return self.decode(tgt_in, memory, src_keep)            # (B, T_tgt, V)


class GPT(torch.nn.Module):
    """The decoder-only Transformer as tinytransformer's nn.GPT with GPT-2's block (pre-LN, GELU,
    learned positions, tied embedding): config as Transformer's, with activation and positions="learned"."""

    def __init__(self, config, generator):
        super().__init__()
        if config.get("positions") != "learned" or not config["norm_first"] or not config["tie_embeddings"]:
            raise ValueError("GPT: the reference has GPT-2's block only (learned positions, pre-LN, tied embedding)")
        V, d_model = config["vocab_size"], config["d_model"]
        self.config = dict(config)
        self.E = torch.nn.Parameter(torch.empty(V, d_model).normal_(0.0, d_model ** -0.5, generator=generator))
        positions = torch.empty(config["max_len"], d_model).normal_(0.0, d_model ** -0.5, generator=generator)
        self.positions = torch.nn.Parameter(positions)          # (max_len, d_model)
        self.layers = torch.nn.ModuleList(EncoderLayer(config, generator) for _ in range(config["n_layers"]))
        self.final_norm = LayerNorm(d_model)

    def forward(self, ids):
        """ids: (B, T) -> logits (B, T, V), each position seeing itself and the ones before."""
        T = ids.shape[1]
        x = F.embedding(ids, self.E) * math.sqrt(self.config["d_model"]) + self.positions[:T]  # (B, T, d_model)
        x = F.dropout(x, self.config["dropout"], self.training)
        keep = torch.ones(T, T, dtype=torch.bool).tril()       # (T, T) causal
        for layer in self.layers:
            x = layer(x, keep)
        return self.final_norm(x) @ self.E.T                    # (B, T, V)


def config_of(ours):
    """The config dict build_model takes, for a tinytransformer model (a Transformer or a GPT)."""
    fields = ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len", "dropout", "norm_first",
              "tie_embeddings", "activation", "positions")
    return {**{name: getattr(ours.config, name) for name in fields}, "model": type(ours).__name__}


def build_model(config, seed):
    """A Transformer (a GPT if config["model"] == "GPT") in float32, its weights drawn from a
    torch.Generator seeded by seed."""
    generator = torch.Generator().manual_seed(seed)
    model_class = GPT if config.get("model") == "GPT" else Transformer
    return model_class(config, generator)


def copy_weights(ours, theirs):
    """Copy a tinytransformer model's weights into this reference model, parameter by
    parameter (both list them in the same order, with the same shapes)."""
    ours_params, theirs_params = ours.parameters(), list(theirs.parameters())
    shapes = [p.shape for p in ours_params], [tuple(p.shape) for p in theirs_params]
    if shapes[0] != shapes[1]:
        raise ValueError(f"copy_weights: the two models' parameters differ in shape: {shapes}")
    with torch.no_grad():
        for p, q in zip(theirs_params, ours_params):
            p.copy_(torch.from_numpy(q.data))
    return theirs


# ---------------------------------------------------------------------------
# Optimiser, one training step, evaluation.

def warmup_lr(step, d_model, warmup, scale=1.0):
    """The paper's schedule: scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), step >= 1."""
    return scale * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def make_optimizer(model):
    """Adam as in the paper (betas 0.9, 0.98, eps 1e-9); train_step sets the lr.

    fused=True updates all parameters in one kernel, the fastest of torch's
    three Adam implementations here: a classroom step took 24.0 ms with it,
    25.3 ms with foreach=True and 27.0 ms with the plain loop (medians of
    100 alternating steps, 1 thread, 2026-11-23).
    """
    return torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9,
                            fused=True)


def to_tensors(batch):
    """A tinytransformer.tasks.Batch of int64 ndarrays -> three torch tensors."""
    return tuple(torch.from_numpy(ids) for ids in batch)


def train_step(model, optimizer, src, tgt_in, tgt_out, lr, label_smoothing=0.0):
    """Forward, loss, backward and one Adam update at learning rate lr; returns the loss."""
    model.train()
    for group in optimizer.param_groups:
        group["lr"] = lr
    logits = model(src, tgt_in)                                 # (B, T_tgt, V)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),  # (B * T_tgt, V)
                           tgt_out.reshape(-1),                 # (B * T_tgt,)
                           ignore_index=PAD, label_smoothing=label_smoothing)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.item()


def lm_train_step(model, optimizer, ids, targets, lr):
    """train_step for a GPT: the cross-entropy of model(ids) against targets, PAD not counted."""
    model.train()
    for group in optimizer.param_groups:
        group["lr"] = lr
    logits = model(ids)                                         # (B, T, V)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def greedy(model, src, n_steps):
    """Batched greedy decoding without a cache: start from BOS, feed back the argmax, never PAD or BOS
    as a next token (as tinytransformer's decoders), PAD once a row has its EOS.

    src: (B, T_src) -> ids (B, n_steps), BOS not included.
    """
    model.eval()
    memory, src_keep = model.encode(src)                        # (B, T_src, d_model)
    ys = torch.full((src.shape[0], 1), BOS, dtype=torch.int64)  # (B, 1)
    finished = torch.zeros(src.shape[0], dtype=torch.bool)      # (B,)
    for _ in range(n_steps):
        logits = model.decode(ys, memory, src_keep)[:, -1].clone()   # (B, V)
        logits[:, [PAD, BOS]] = -torch.inf
        next_ids = torch.where(finished, PAD, logits.argmax(dim=-1))  # (B,)
        finished |= next_ids == EOS
        ys = torch.cat([ys, next_ids[:, None]], dim=1)          # (B, t + 1)
    return ys[:, 1:]                                            # (B, n_steps)


def exact_match(decoded, tgt_out):
    """Fraction of rows whose decoded ids, up to and including the first EOS of
    tgt_out, equal tgt_out there. decoded, tgt_out: (B, T) int ndarrays."""
    eos_at = (tgt_out == EOS).argmax(axis=1)                    # (B,) index of each row's EOS
    upto_eos = np.arange(tgt_out.shape[1])[None, :] <= eos_at[:, None]  # (B, T)
    wrong = (decoded != tgt_out) & upto_eos                     # (B, T)
    return float(np.mean(~wrong.any(axis=1)))


def evaluate(model, eval_batch):
    """Greedy exact match on a held-out Batch (seq_len + 1 decoding steps)."""
    decoded = greedy(model, torch.from_numpy(eval_batch.src), eval_batch.tgt_out.shape[1])
    return exact_match(decoded.numpy(), eval_batch.tgt_out)


# ---------------------------------------------------------------------------
# Time to accuracy (benchmarks/time_to_accuracy.py calls this).

def time_to_accuracy(config, task, optimizer_setting, target=0.99, eval_every=100,
                     max_steps=3000, seed=0, n_eval=1000):
    """Train on fresh batches until held-out greedy exact match >= target.

    optimizer_setting: dict(lr_scale, warmup, label_smoothing) of the warmup schedule.
    Training batches come from a Generator seeded by seed, the n_eval held-out
    examples from seed + 1000. train_seconds counts drawing the batches and the
    training steps; wall_seconds adds the evaluations. Returns a dict.
    """
    model = build_model(config, seed)
    optimizer = make_optimizer(model)
    train_rng = np.random.default_rng(seed)
    eval_batch = make_batch(task["task"], n_eval, task["seq_len"], task["n_symbols"],
                            np.random.default_rng(seed + 1000))
    train_seconds = 0.0
    wall_start = time.perf_counter()
    accuracy, reached_at, step, n_evals = 0.0, None, 0, 0
    while step < max_steps and reached_at is None:
        step += 1
        start = time.perf_counter()
        src, tgt_in, tgt_out = to_tensors(make_batch(
            task["task"], task["batch_size"], task["seq_len"], task["n_symbols"], train_rng))
        lr = warmup_lr(step, config["d_model"], optimizer_setting["warmup"],
                       optimizer_setting["lr_scale"])
        train_step(model, optimizer, src, tgt_in, tgt_out, lr,
                   optimizer_setting["label_smoothing"])
        train_seconds += time.perf_counter() - start
        if step % eval_every == 0 or step == max_steps:
            accuracy = evaluate(model, eval_batch)
            n_evals += 1
            if accuracy >= target:
                reached_at = step
    wall_seconds = time.perf_counter() - wall_start
    return dict(task=task["task"], steps=step, wall_seconds=wall_seconds,
                train_seconds=train_seconds, ms_per_step=1000.0 * train_seconds / step,
                exact_match=accuracy, reached_target_at_step=reached_at, n_evals=n_evals,
                config=dict(model=config, task=task, optimizer=optimizer_setting,
                            target=target, eval_every=eval_every, max_steps=max_steps,
                            seed=seed, n_eval=n_eval,
                            torch=torch.__version__, threads=torch.get_num_threads()))
