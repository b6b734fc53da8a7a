// Objects allocated through Pooled<T>: each its own storage while alive, the
// storage of freed ones used again, and a larger derived class served by
// the heap.
#include "cqmgr/core/pooled.hpp"

#include <cstdint>
#include <gtest/gtest.h>
#include <memory>
#include <set>
#include <vector>

using cqmgr::core::Pooled;

namespace {
struct Small : Pooled<Small> {
    uint64_t a = 1, b = 2, c = 3;
};
struct Larger : Small {
    uint64_t more[8] = {};
};
} // namespace

TEST(Pooled, LiveObjectsNeverShareStorage) {
    // More than one block's worth, so that the pool grows.
    std::vector<std::unique_ptr<Small>> v;
    std::set<const void*> seen;
    for (int i = 0; i < 1000; ++i) {
        v.push_back(std::make_unique<Small>());
        v.back()->a = static_cast<uint64_t>(i);
        EXPECT_TRUE(seen.insert(v.back().get()).second);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(v.back().get()) % alignof(Small), 0u);
    }
    for (int i = 0; i < 1000; ++i)
        EXPECT_EQ(v[i]->a, static_cast<uint64_t>(i));
}

TEST(Pooled, FreedStorageIsUsedAgain) {
    if (!CQMGR_POOLED_OBJECTS) GTEST_SKIP() << "objects come from the heap in this build";
    auto* first = new Small;
    const void* at = first;
    delete first;
    auto* second = new Small;
    EXPECT_EQ(static_cast<const void*>(second), at);
    delete second;
}

TEST(Pooled, LargerDerivedObjectsComeFromTheHeap) {
    std::vector<std::unique_ptr<Larger>> v;
    for (int i = 0; i < 200; ++i) {
        v.push_back(std::make_unique<Larger>());
        v.back()->more[7] = static_cast<uint64_t>(i);
    }
    for (int i = 0; i < 200; ++i)
        EXPECT_EQ(v[i]->more[7], static_cast<uint64_t>(i));
}
