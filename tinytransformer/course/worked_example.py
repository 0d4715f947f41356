"""The course's worked example: self-attention on 3 inputs of 4 features, by hand (notebook 01).

Row vectors, as in the course: Q = X @ W_q, K = X @ W_k, V = X @ W_v.
"""
import numpy as np

X = np.array([[1, 0, 1, 0],
              [0, 2, 0, 2],
              [1, 1, 1, 1]], dtype=np.float64)        # (3 inputs, 4 features)
W_K = np.array([[0, 0, 1],
                [1, 1, 0],
                [0, 1, 0],
                [1, 1, 0]], dtype=np.float64)         # (4, d_k=3)
W_Q = np.array([[1, 0, 1],
                [1, 0, 0],
                [0, 0, 1],
                [0, 1, 1]], dtype=np.float64)         # (4, d_k=3)
W_V = np.array([[0, 2, 0],
                [0, 3, 0],
                [1, 0, 3],
                [1, 1, 0]], dtype=np.float64)         # (4, d_v=3)
