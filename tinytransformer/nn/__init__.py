"""The layers of the Transformer, small to large, and the models built from them.

Shapes: B batch, T time (T_src for the source, T_tgt for the target),
V vocabulary, h heads, d_k = d_model / h.

    config.py       ModelConfig: the sizes and switches every model shares; each family's config: TransformerConfig
                    (the encoder-decoder, GPT), BERTConfig (+ the [CLS] head), VisionConfig (patches, classes)
    module.py       Module: parameters, sub-layers, train/eval mode; inference(model): eval mode, no tape
    layers.py       Linear, Embedding, Sinusoidal/LearnedPositions, LayerNorm, RMSNorm, Dropout, FeedForward, SwiGLU
    attention.py    MultiHeadAttention: project, split into heads, (rotate q and k: rope,) attend, merge
    blocks.py       SelfAttentionLayer (the encoder's layer), DecoderLayer: sublayers with residual + normalisation
    model.py        Model: what every model shares (embeddings in, output projection out)
    cache.py        KVCache: the keys and values incremental decoding keeps for every attention layer
    transformer.py  Transformer: encoder-decoder, model(src_ids, tgt_in_ids)
    gpt.py          GPT: decoder-only, causal, gpt(ids)
    bert.py         BERT: encoder-only, bert(ids) and bert.classify(ids); classifier_from a pretrained BERT
    vision.py       VisionTransformer: the encoder on an image cut into patches, vit(patches) -> class logits
"""
from .attention import MultiHeadAttention
from .bert import BERT, classifier_from, transfer_weights
from .blocks import DecoderLayer, SelfAttentionLayer, residual
from .cache import KeysValues, KVCache, LayerCache
from .config import BERTConfig, ModelConfig, TransformerConfig, VisionConfig
from .gpt import GPT
from .layers import (ACTIVATIONS, Dropout, Embedding, FeedForward, LayerNorm, LearnedPositions, Linear, RMSNorm,
                     SinusoidalPositions, SwiGLU, swiglu_d_ff)
from .model import Model
from .module import Module, inference, parameter
from .transformer import Transformer
from .vision import VisionTransformer

MODELS = {cls.__name__: cls for cls in (Transformer, GPT, BERT, VisionTransformer)}   # by name, for checkpoints
