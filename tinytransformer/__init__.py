"""tinytransformer: the Transformer of "Attention Is All You Need" in NumPy, written to be read.

    import tinytransformer as tt
    from tinytransformer import functional as F

Importing it changes nothing about your process; tt.use_speed_settings() opts in
to one BLAS thread and to keeping freed memory (see tools/speed_settings.py).
"""
from . import functional, nn, ops
from . import decode, metrics, optim, tasks, train
from .checkpoint import load_checkpoint, save_checkpoint
from .gradcheck import GradcheckError, elementwise_relative_error, gradcheck, numerical_gradient, relative_error
from .ops import causal_mask, padding_mask, sinusoidal_positions
from .nn import BERTConfig, ModelConfig, TransformerConfig, VisionConfig
from .pretrained import load_pretrained
from .tools.speed_settings import use_speed_settings
from .tensor import Tape, Tensor
from .vocabulary import BOS, EOS, PAD

__version__ = "0.1.0"
