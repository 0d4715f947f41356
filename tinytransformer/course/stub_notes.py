"""What a stub's docstring says beside what to return: each backward pass's special cases, and where it is derived.

The grader's cases (cases.py) exercise every special case named here. The
notebooks are the edition's own; an op no notebook derives says so.
"""

BROADCAST = ("a or b may be a plain number (its gradient is None) or may have been broadcast against the "
             "other: sum each gradient back to its input's shape (unbroadcast, in this file)")
CHAIN_RULE = "notebooks/02_the_tape.ipynb (the chain rule, one op at a time)"

NOTES = {
    "add": (BROADCAST, CHAIN_RULE),
    "sub": (BROADCAST, CHAIN_RULE),
    "mul": (BROADCAST, CHAIN_RULE),
    "div": (BROADCAST, CHAIN_RULE),
    "matmul": ("batch axes broadcast, a (2, 3, 5) @ b (5, 4) as well as (3, 4) @ (2, 4, 2): the transposes "
               "swap the last two axes only, and each gradient is summed back to its input's shape",
               CHAIN_RULE),
    "sum": ("axis may be None (every axis), an int or a tuple, and keepdims True or False: dout has the "
            "output's shape, so give it back the summed axes (size 1) before it spreads over them", CHAIN_RULE),
    "mean": ("as sum (axis None, an int or a tuple; keepdims either way), and every element counts 1/n "
             "of the ones averaged", CHAIN_RULE),
    "reshape": ("undo the reshape: dout has the new shape, dx the old one", CHAIN_RULE),
    "transpose": ("undo the permutation with its inverse (axes None reversed every axis)", CHAIN_RULE),
    "exp": ("the cache is the output e^x, not x", CHAIN_RULE),
    "log": ("x > 0 always", CHAIN_RULE),
    "relu": ("the cache says where x > 0; no input sits exactly at 0", CHAIN_RULE),
    "gelu": ("the tanh form of the forward pass, with its cache (x, t)",
             "notebooks/03_every_op.ipynb (GELU and log-softmax)"),
    "silu": ("the cache is (x, s) with s = sigmoid(x): out = x * s is a product, and s depends on x too",
             "notebooks/17_todays_llm_block.ipynb (SiLU and the SwiGLU feed-forward)"),
    "dropout": ("the cache can be None (p = 0, or not training): then nothing was dropped or scaled",
                CHAIN_RULE),
    "linear": ("x may have any number of leading axes; b may be None, and then db is None",
               "notebooks/03_every_op.ipynb (Linear)"),
    "softmax": ("along any axis; a masked input (-inf) has probability 0, and a fully masked row is all zeros",
                "notebooks/03_every_op.ipynb (Softmax)"),
    "log_softmax": ("along any axis; a masked input (-inf) is a constant and gets gradient exactly 0, and a "
                    "fully masked row gets zeros: never nan",
                    "notebooks/03_every_op.ipynb (GELU and log-softmax)"),
    "layer_norm": ("over the last axis; gamma and beta were stretched over every row",
                   "notebooks/03_every_op.ipynb (Layer norm) and notebooks/06_layer_normalisation.ipynb"),
    "rms_norm": ("over the last axis; gamma was stretched over every row; no mean is taken away, so only the "
                 "root mean square depends on every x_j",
                 "notebooks/17_todays_llm_block.ipynb (RMSNorm: layer norm without its mean)"),
    "mask": ("keep is boolean and gets None; a masked score was replaced by -inf, a constant",
             "notebooks/04_multi_head_attention_and_masks.ipynb"),
    "attention": ("keep may be None; batch and head axes lead; a query row with no key kept has output 0 and "
                  "gets zero gradients, never nan; scale is 1/sqrt(d_k) unless given",
                  "notebooks/01_self_attention_by_hand.ipynb (the backward pass by hand)"),
    "flash_attention": ("the cache holds no probabilities: each tile's are recomputed from what it does hold; "
                        "keep may be None; batch and head axes lead; the blocks need not divide T; a query row "
                        "with no key kept has output 0 and gets zero gradients, never nan",
                        "notebooks/18_flash_attention.ipynb (the backward pass by recomputation)"),
    "split_heads": ("only moves numbers: undo the reshape and the transpose",
                    "notebooks/04_multi_head_attention_and_masks.ipynb (heads as a batch)"),
    "merge_heads": ("only moves numbers: undo the transpose and the reshape",
                    "notebooks/04_multi_head_attention_and_masks.ipynb (heads as a batch)"),
    "repeat_kv": ("each key/value head was copied to a group of n_heads / h_kv neighbouring query heads; a "
                  "head used g times gets the sum of g gradients",
                  "no notebook: the rule above and the forward pass are all it takes"),
    "embedding": ("ids may repeat: every occurrence of an id adds its row of dout to that row of dtable",
                  "no notebook: the rule above and the forward pass are all it takes"),
    "positional_encoding": ("the positions added are a constant", "notebooks/05_positional_encoding.ipynb"),
    "rope": ("positions are integers and get None; each pair (x[2i], x[2i+1]) was rotated by its own angle, "
             "and the cache holds the cos and sin of every angle",
             "notebooks/17_todays_llm_block.ipynb (Rotary positions)"),
    "cross_entropy": ("the loss is a mean over the positions counted; positions whose target is ignore_index "
                      "count for nothing and get zero; label smoothing spreads part of the target over every "
                      "class; targets get None",
                      "notebooks/03_every_op.ipynb (Cross-entropy)"),
    "Tape.backward": ("records replay in reverse; a tensor used twice gets the sum of its gradients, added out "
                      "of place into .grad (which may already hold one); ops that do not lead to the output "
                      "are skipped; a second backward is a RuntimeError",
                      "notebooks/02_the_tape.ipynb"),
}
