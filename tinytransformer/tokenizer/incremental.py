"""BPE fast: count every pair once, then after each merge update only what the merge touched.

The plain algorithm (bpe.learn_merges_naive) recounts every adjacent pair of
the whole text after every merge: merges x text length steps. Here the text
is a chain of tokens, and an index says where each pair occurs. Merging the
pair (a, b) at one place changes only its neighbours:

    x a b y   ->   x ab y      pairs lost: (x, a) (a, b) (b, y)    pairs gained: (x, ab) (ab, y)

so a merge costs as much as the places it occurs, and the most frequent pair
comes off a heap. learn_merges learns the merges this way; apply_merges uses
the same chain to encode text with merges already learned.
"""
import heapq
from collections import defaultdict

N_BYTES = 256               # ids 0..255 are the byte values; merges make ids from 256 on

GONE = -1        # the id of a position whose token was merged into its left neighbour; also "no neighbour"


class SymbolChain:
    """Chunks of token ids as one linked chain: next[p] and prev[p] are the neighbours of position p
    within its chunk (GONE at a chunk's ends), so no pair spans two chunks.

    where[pair] holds the positions of the pair's left token; count[pair] is how often the pair
    occurs, each occurrence counted weight[p] times (a chunk's weight: how often it occurs in the text).
    """

    def __init__(self, chunks, weights):
        self.ids, self.next, self.prev, self.weight, self.starts = [], [], [], [], []
        self.where, self.count = defaultdict(set), defaultdict(int)
        for chunk, weight in zip(chunks, weights):          # chunks are never empty (split_text)
            start, n = len(self.ids), len(chunk)
            self.starts.append(start)
            self.ids += chunk
            self.weight += [weight] * n
            self.prev += [GONE] + list(range(start, start + n - 1))
            self.next += list(range(start + 1, start + n)) + [GONE]
        for p, q in enumerate(self.next):
            if q != GONE:
                self.add(p, (self.ids[p], self.ids[q]))

    def add(self, p, pair):
        self.where[pair].add(p)
        self.count[pair] += self.weight[p]

    def remove(self, p, pair):
        self.where[pair].discard(p)
        self.count[pair] -= self.weight[p]
        if not self.where[pair]:
            del self.where[pair], self.count[pair]

    def merge(self, pair, new_id):
        """Replace every (a, b) by new_id, left to right as bpe.merge does; return the pairs whose count changed."""
        a, b = pair
        touched = set()
        for p in sorted(self.where.get(pair, ())):
            q = self.next[p]
            if self.ids[p] != a or q == GONE or self.ids[q] != b:
                continue                     # an earlier place took one of its tokens: "a a a" merges once
            x, y = self.prev[p], self.next[q]                 # x p q y  ->  x p y, p now new_id
            lost = [(x, (self.ids[x], a))] if x != GONE else []
            lost += [(p, pair)] + ([(q, (b, self.ids[y]))] if y != GONE else [])
            for position, old in lost:
                self.remove(position, old)
            self.ids[p], self.ids[q], self.next[p] = new_id, GONE, y
            if y != GONE:
                self.prev[y] = p
            gained = ([(x, (self.ids[x], new_id))] if x != GONE else []) + \
                     ([(p, (new_id, self.ids[y]))] if y != GONE else [])
            for position, new in gained:
                self.add(position, new)
            touched.update(old for _, old in lost)
            touched.update(new for _, new in gained)
        return touched

    def chunks(self):
        """The chunks' ids as they are now."""
        out = []
        for p in self.starts:
            ids = []
            while p != GONE:
                ids.append(self.ids[p])
                p = self.next[p]
            out.append(ids)
        return out


def learn_merges(chunks, weights, n_merges):
    """Up to n_merges merges, each of the most frequent pair (ties: the smaller pair, (a, b) < (c, d)
    if a < c, or a == c and b < d), making ids 256, 257, ... (after the bytes); fewer if no pair is left.

    chunks: sequences of ids (a chunk's UTF-8 bytes); weights: how often each chunk occurs.
    Returns the merged pairs in order.
    """
    chain = SymbolChain(chunks, weights)
    heap = [(-count, pair) for pair, count in chain.count.items()]       # most frequent, then smallest, first
    heapq.heapify(heap)
    merges = []
    while heap and len(merges) < n_merges:
        negative_count, pair = heapq.heappop(heap)
        if chain.count.get(pair) != -negative_count:
            continue                         # out of date: the pair's count changed, and its new count was pushed
        for changed in chain.merge(pair, N_BYTES + len(merges)):
            if changed in chain.count:
                heapq.heappush(heap, (-chain.count[changed], changed))
        merges.append(pair)
    return merges


def apply_merges(chunks, merges):
    """Encode each chunk (a sequence of byte ids) with learned merges {pair: new_id}: merge the pair
    learned first wherever it occurs, then the next, as long as a learned pair is left.

    A learned pair can only be made of ids learned before it, so merging in the order learned
    (lowest new_id first) needs each pair only once. Returns a list of ids per chunk.
    """
    chain = SymbolChain(chunks, [1] * len(chunks))
    heap = [(merges[pair], pair) for pair in chain.where if pair in merges]
    heapq.heapify(heap)
    while heap:
        new_id, pair = heapq.heappop(heap)
        if pair not in chain.where:
            continue                         # already merged (pushed twice), or no longer there
        for changed in chain.merge(pair, new_id):
            if changed in merges and changed in chain.where:
                heapq.heappush(heap, (merges[changed], changed))
    return chain.chunks()
