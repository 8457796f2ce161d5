from collections import OrderedDict


class LRUCache:
    def __init__(self, capacity):
        self.capacity = capacity
        self.data = OrderedDict()

    def get(self, key):
        if key not in self.data:
            return -1
        self.data.move_to_end(key)
        return self.data[key]

    def put(self, key, value):
        # The defect: updating an existing key keeps its old position.
        if key in self.data:
            self.data[key] = value
            return
        self.data[key] = value
        if len(self.data) > self.capacity:
            self.data.popitem(last=False)
