"""Sizes checked against memory before anything is allocated: one line saying how much would be needed."""
import os


def available_bytes():
    """Memory the machine has available now (Linux: MemAvailable; elsewhere physical pages free), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def gib(n_bytes):
    """n_bytes in GiB as text, one decimal: '1.5 GiB'."""
    return f"{n_bytes / 2**30:.1f} GiB"


def check_fits(n_bytes, what, who):
    """ValueError (one line) if n_bytes, the memory `what` needs, is more than the machine has available."""
    available = available_bytes()
    if available is not None and n_bytes > available:
        raise ValueError(f"{who}: {what} needs about {gib(n_bytes)} of memory; this machine has {gib(available)} "
                         "available")


def parameter_floor(config, embeds_tokens=True):
    """A lower bound on the parameters any model of config has: in each layer the four attention
    projections and the two feed-forward matrices, and the token embedding (embeds_tokens: a config with a
    vocab_size; the vision encoder's has none)."""
    d = config.d_model
    vocabulary = getattr(config, "vocab_size", 0) if embeds_tokens else 0
    return vocabulary * d + config.n_layers * (4 * d * d + 2 * d * config.d_ff)


def training_floor(config, batch_size):
    """A lower bound on the bytes one training step of a model of config needs (float64): the parameters with
    their gradients and Adam's two moments, and one layer's worth per layer of what backward keeps (attention
    scores and probabilities, the feed-forward hidden layer, a few (B, T, d_model) arrays), and the logits over
    a vocabulary."""
    B, T, d = batch_size, config.max_len, config.d_model
    per_layer = 2 * B * config.n_heads * T * T + 2 * B * T * config.d_ff + 8 * B * T * d
    return 8 * (4 * parameter_floor(config) + config.n_layers * per_layer + 3 * B * T * getattr(config, "vocab_size", 0))
