"""The pure NumPy ops: each a forward/backward pair.

    out, cache = name_forward(*inputs, **options)
    grads      = name_backward(dout, cache)   # a tuple, one entry per array input, in order

Entries for inputs that cannot have a gradient (token ids, masks) are None.
These know nothing of Tensors or tapes; tensor.py chains them.
"""
from .attention import (attention_backward, attention_forward, causal_mask, mask_backward,
                        mask_forward, merge_heads_backward, merge_heads_forward, padding_mask,
                        split_heads_backward, split_heads_forward)
from .attention_fast import attention_backward_fast, attention_forward_fast
from .basic import (add_backward, add_forward, div_backward, div_forward, dropout_backward,
                    dropout_forward, exp_backward, exp_forward, gelu_backward, gelu_forward,
                    log_backward, log_forward, matmul_backward, matmul_forward, mean_backward,
                    mean_forward, mul_backward, mul_forward, relu_backward, relu_forward,
                    reshape_backward, reshape_forward, silu_backward, silu_forward, sub_backward,
                    sub_forward, sum_backward, sum_forward, transpose_backward, transpose_forward,
                    broadcast_axes, unbroadcast)
from .embedding import (embedding_backward, embedding_forward, positional_encoding_backward,
                        positional_encoding_forward, sinusoidal_positions)
from .flash_attention import flash_attention_backward, flash_attention_forward
from .grouped import repeat_kv_backward, repeat_kv_forward
from .layernorm import layer_norm_backward, layer_norm_forward, rms_norm_backward, rms_norm_forward
from .linear import linear_backward, linear_forward
from .loss import cross_entropy_backward, cross_entropy_forward
from .rope import rope_backward, rope_forward
from .softmax import log_softmax_backward, log_softmax_forward, softmax_backward, softmax_forward
