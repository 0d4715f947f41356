"""The text task's corpus by its first import path, `tt.text`: the code lives in tasks/text.py, and
text generation in decode.py (`generate` here is decode.generate_text)."""
from .decode import generate_text as generate
from .tasks.text import TEXT_FILE, CharCorpus, TextTask, load_text

__all__ = ["TEXT_FILE", "CharCorpus", "TextTask", "generate", "load_text"]
