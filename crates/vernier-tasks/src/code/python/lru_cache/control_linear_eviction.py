class LRUCache:
    """Right answers, but every eviction scans the whole cache: O(capacity)."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.values = {}
        self.last_used = {}
        self.clock = 0

    def get(self, key):
        if key not in self.values:
            return -1
        self.clock += 1
        self.last_used[key] = self.clock
        return self.values[key]

    def put(self, key, value):
        self.clock += 1
        if key not in self.values and len(self.values) >= self.capacity:
            oldest = min(self.last_used, key=self.last_used.get)
            del self.values[oldest]
            del self.last_used[oldest]
        self.values[key] = value
        self.last_used[key] = self.clock
