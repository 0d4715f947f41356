"""GPT and BERT equal PyTorch models built from torch.nn.TransformerEncoderLayer, in float64 (skipped without torch).

Each reference takes the weights of our model, runs the same ids, and
backpropagates the same random upstream gradient; every parameter's
gradient must match. torch's layer keeps Q, K, V in one (3d, d) matrix and
stores weights as (d_out, d_in): copying transposes and stacks ours.
"""
import math

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.nn import BERT, GPT
from helpers import tiny_config

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
TF = torch.nn.functional
ACTIVATIONS = {"relu": TF.relu, "gelu": lambda x: TF.gelu(x, approximate="tanh")}


class Reference(torch.nn.Module):
    """Embedding * sqrt(d) + positions, a stack of torch encoder layers, a final norm (pre-LN), logits."""

    def __init__(self, ours):
        super().__init__()
        c = ours.config
        self.config = c
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(c.d_model, c.n_heads, c.d_ff, dropout=0.0,
                                             activation=ACTIVATIONS[c.activation], batch_first=True,
                                             norm_first=c.norm_first, dtype=torch.float64)
            for _ in range(c.n_layers))
        self.final_norm = torch.nn.LayerNorm(c.d_model, dtype=torch.float64) if c.norm_first else None
        self.names = {}                       # our parameter name -> (torch tensor, how to copy)
        self.embed = self.share(ours, "embed.table")
        self.positions = self.share(ours, "positions.table") if c.positions == "learned" else None
        stack, final = ("layers", "final_norm") if isinstance(ours, GPT) else ("encoder", "encoder_norm")
        for i, layer in enumerate(self.layers):
            attn, prefix = layer.self_attn, f"{stack}.{i}."
            W = [ours_parameter(ours, f"{prefix}self_attn.W_{x}.W").T for x in "qkv"]
            b = [ours_parameter(ours, f"{prefix}self_attn.W_{x}.b") for x in "qkv"]
            with torch.no_grad():
                attn.in_proj_weight.copy_(torch.from_numpy(np.concatenate(W)))
                attn.in_proj_bias.copy_(torch.from_numpy(np.concatenate(b)))
            self.names[f"{prefix}self_attn.W_q.W"] = (attn.in_proj_weight, lambda g, d=c.d_model: g[:d].T)
            self.names[f"{prefix}self_attn.W_k.W"] = (attn.in_proj_weight, lambda g, d=c.d_model: g[d:2 * d].T)
            self.names[f"{prefix}self_attn.W_v.W"] = (attn.in_proj_weight, lambda g, d=c.d_model: g[2 * d:].T)
            self.names[f"{prefix}self_attn.W_q.b"] = (attn.in_proj_bias, lambda g, d=c.d_model: g[:d])
            self.names[f"{prefix}self_attn.W_k.b"] = (attn.in_proj_bias, lambda g, d=c.d_model: g[d:2 * d])
            self.names[f"{prefix}self_attn.W_v.b"] = (attn.in_proj_bias, lambda g, d=c.d_model: g[2 * d:])
            for ours_name, theirs in (("self_attn.W_o", attn.out_proj), ("feed_forward.linear1", layer.linear1),
                                      ("feed_forward.linear2", layer.linear2)):
                self.copy(ours, f"{prefix}{ours_name}.W", theirs.weight, transpose=True)
                self.copy(ours, f"{prefix}{ours_name}.b", theirs.bias)
            for norm in ("norm1", "norm2"):
                self.copy(ours, f"{prefix}{norm}.gamma", getattr(layer, norm).weight)
                self.copy(ours, f"{prefix}{norm}.beta", getattr(layer, norm).bias)
        if self.final_norm is not None:
            self.copy(ours, f"{final}.gamma", self.final_norm.weight)
            self.copy(ours, f"{final}.beta", self.final_norm.bias)
        self.output = None
        if not c.tie_embeddings:
            self.output = torch.nn.Linear(c.d_model, c.vocab_size, dtype=torch.float64)
            self.copy(ours, "output.W", self.output.weight, transpose=True)
            self.copy(ours, "output.b", self.output.bias)
        if getattr(ours, "classifier", None) is not None:
            self.classifier = torch.nn.Linear(c.d_model, c.n_classes, dtype=torch.float64)
            self.copy(ours, "classifier.W", self.classifier.weight, transpose=True)
            self.copy(ours, "classifier.b", self.classifier.bias)

    def share(self, ours, name):
        p = torch.nn.Parameter(torch.from_numpy(ours_parameter(ours, name).copy()))
        self.names[name] = (p, lambda g: g)
        return p

    def copy(self, ours, name, theirs, transpose=False):
        value = ours_parameter(ours, name)
        with torch.no_grad():
            theirs.copy_(torch.from_numpy(value.T if transpose else value))
        self.names[name] = (theirs, (lambda g: g.T) if transpose else (lambda g: g))

    def hidden(self, ids, causal):
        ids = torch.from_numpy(ids)
        T = ids.shape[1]
        x = TF.embedding(ids, self.embed) * math.sqrt(self.config.d_model)
        if self.positions is not None:
            x = x + self.positions[:T]
        else:
            x = x + torch.from_numpy(tt.sinusoidal_positions(T, self.config.d_model))
        # torch's masks say where NOT to attend: the upper triangle, and PAD keys
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1) if causal else None
        pad = None if causal else ids == self.config.pad_id
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=pad)
        return x if self.final_norm is None else self.final_norm(x)

    def logits(self, x):
        return x @ self.embed.T if self.output is None else self.output(x)

    def gradients(self):
        return {name: None if p.grad is None else recover(p.grad.numpy()) for name, (p, recover) in self.names.items()}


def ours_parameter(model, name):
    return dict(model.named_parameters())[name].data


def compare(ours, reference, our_fn, their_fn, rng):
    """Forward and every parameter's gradient, for one random upstream gradient."""
    ours.zero_grad()
    with tt.Tape() as tape:
        out = our_fn()
    dout = rng.standard_normal(out.shape)
    tape.backward(out, dout)
    their_out = their_fn()
    their_out.backward(torch.from_numpy(dout))
    np.testing.assert_allclose(out.data, their_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    their_grads = reference.gradients()
    assert set(their_grads) == {name for name, _ in ours.named_parameters()}
    for name, p in ours.named_parameters():
        if p.grad is None or their_grads[name] is None:          # unused by this output: the head of the other
            assert p.grad is None and their_grads[name] is None and name.startswith("classifier"), name
            continue
        np.testing.assert_allclose(p.grad, their_grads[name], rtol=1e-9, atol=1e-11, err_msg=name)


IDS = np.array([[1, 3, 6, 5, 4], [1, 6, 5, 3, 0]])            # (2, 5), the second row ends in PAD


@pytest.mark.parametrize("norm_first", [True, False], ids=["pre-LN", "post-LN"])
@pytest.mark.parametrize("positions, tie_embeddings, activation",
                         [("learned", True, "gelu"), ("sinusoidal", False, "relu")])
def test_gpt_equals_torch(norm_first, positions, tie_embeddings, activation, rng):
    gpt = GPT(tiny_config(norm_first=norm_first, positions=positions, tie_embeddings=tie_embeddings,
                          activation=activation), rng=0)
    reference = Reference(gpt)
    compare(gpt, reference, lambda: gpt(IDS), lambda: reference.logits(reference.hidden(IDS, causal=True)), rng)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("head", ["masked-LM", "classify"])
def test_bert_with_pad_equals_torch(norm_first, head, rng):
    bert = BERT(tiny_config(tt.BERTConfig, norm_first=norm_first, positions="learned", activation="gelu", n_classes=3), rng=0)
    reference = Reference(bert)
    if head == "masked-LM":
        compare(bert, reference, lambda: bert(IDS), lambda: reference.logits(reference.hidden(IDS, causal=False)),
                rng)
    else:
        compare(bert, reference, lambda: bert.classify(IDS),
                lambda: reference.classifier(reference.hidden(IDS, causal=False)[:, 0]), rng)
