"""tinytransformer: the Transformer of "Attention Is All You Need" in NumPy, written to be read.

    import tinytransformer as tt
    from tinytransformer import functional as F
"""
from .threads import one_blas_thread_unless_chosen

one_blas_thread_unless_chosen()   # before NumPy is imported: see threads.py

from . import data, functional, nn, ops
from . import decode, optim, train
from .checkpoint import load_checkpoint, save_checkpoint
from .data import BOS, EOS, PAD
from .memory import keep_freed_memory
from .gradcheck import GradcheckError, gradcheck, numerical_gradient, rel_error
from .ops import causal_mask, padding_mask, sinusoidal_positions
from .nn import TransformerConfig
from .tensor import Tape, Tensor

__version__ = "0.1.0"

keep_freed_memory()     # reuse freed arrays' memory: see memory.py (no effect on results)
