"""Sizes checked against memory before anything is allocated: one line saying how much would be needed."""
import os

try:
    import resource
except ImportError:                    # not on Windows
    resource = None

# a cgroup's limit and usage (v2, then v1): a container's memory, which MemAvailable does not show
CGROUP_FILES = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"))


def available_bytes():
    """Memory this process can still allocate, or None if nothing says: the least of the machine's available
    memory (Linux: MemAvailable; elsewhere physical pages free), its cgroup's room (limit - usage) and its
    ulimit's room (RLIMIT_AS and RLIMIT_DATA less what the process holds now)."""
    rooms = [machine_bytes()]
    for limit_file, usage_file in CGROUP_FILES:
        limit, usage = number_in(limit_file), number_in(usage_file)
        if limit is not None and usage is not None:
            rooms.append(max(limit - usage, 0))
            break
    if resource is not None:
        for limit, held in ((resource.RLIMIT_AS, "VmSize:"), (getattr(resource, "RLIMIT_DATA", None), "VmData:")):
            soft = resource.getrlimit(limit)[0] if limit is not None else resource.RLIM_INFINITY
            if soft != resource.RLIM_INFINITY:
                rooms.append(max(soft - (status_bytes(held) or 0), 0))
    rooms = [room for room in rooms if room is not None]
    return min(rooms) if rooms else None


def machine_bytes():
    """Memory the machine has available now (Linux: MemAvailable; elsewhere physical pages free), or None."""
    found = status_bytes("MemAvailable:", "/proc/meminfo")
    if found is not None:
        return found
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def status_bytes(key, path="/proc/self/status"):
    """The "key: N kB" line of a /proc file, in bytes, or None."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def number_in(path):
    """The integer a small file holds ("max": no limit), or None."""
    try:
        with open(path) as f:
            text = f.read(64).strip()
        return int(text) if text != "max" else None
    except (OSError, ValueError):
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
    projections (W_k and W_v as wide as the key/value heads: fewer with grouped-query attention) and the two
    feed-forward matrices, and the token embedding (embeds_tokens: a config with a vocab_size; the vision
    encoder's has none)."""
    d = config.d_model
    d_kv = (config.n_kv_heads or config.n_heads) * (d // config.n_heads)      # the keys' and values' width
    vocabulary = getattr(config, "vocab_size", 0) if embeds_tokens else 0
    return vocabulary * d + config.n_layers * (2 * d * d + 2 * d * d_kv + 2 * d * config.d_ff)


def training_floor(config, batch_size):
    """A lower bound on the bytes one training step of a model of config needs (float64): the parameters with
    their gradients and Adam's two moments, and one layer's worth per layer of what backward keeps (attention
    scores and probabilities, the feed-forward hidden layer, a few (B, T, d_model) arrays), and the logits over
    a vocabulary."""
    B, T, d = batch_size, config.max_len, config.d_model
    per_layer = 2 * B * config.n_heads * T * T + 2 * B * T * config.d_ff + 8 * B * T * d
    return 8 * (4 * parameter_floor(config) + config.n_layers * per_layer + 3 * B * T * getattr(config, "vocab_size", 0))


def evaluation_floor(config, rows):
    """A lower bound on the bytes evaluating rows sequences at once needs (float32, no tape: one layer's
    attention scores and probabilities, its feed-forward hidden layer, a few (B, T, d_model) arrays, and the
    logits over a vocabulary)."""
    B, T, d = rows, config.max_len, config.d_model
    return 4 * (2 * B * config.n_heads * T * T + B * T * config.d_ff + 4 * B * T * d
                + B * T * getattr(config, "vocab_size", 0))
