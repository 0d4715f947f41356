"""What generate and embed share: the --weights model loaded, every failure one line."""
from ..pretrained import load_pretrained
from .common import BadInput


def loaded(weights, kind, fits):
    """load_pretrained(weights) -> (model, tokenizer); BadInput if it fails or the model is not fits(model) (kind
    says what was expected)."""
    try:
        model, tokenizer = load_pretrained(weights)
    except ImportError as error:
        raise BadInput(f"--weights needs the pretrained extra ({error.name} is not installed): "
                       "pip install 'tinytransformer[pretrained]'") from None
    except (ValueError, OSError) as error:
        raise BadInput(str(error)) from None
    if not fits(model):
        raise BadInput(f"--weights {weights} holds a {type(model).__name__}; expected {kind}")
    return model, tokenizer
