// Allocation of the structures the queue manager makes for every message in
// core (its message, job, peer and entry) from pools of same-sized blocks
// (Boost.Pool), one pool per type.
//
// Why: the active queue may hold 20,000 messages, and each of these
// objects is otherwise a malloc chunk with a header and its size rounded up
// to 16 bytes: some 40 bytes a message of nothing.  A pooled object costs
// its size, and taking or giving one back is a few instructions.
//
// A pool grows by blocks of a fixed number of objects, so that at most one
// block's worth is ever allocated and not used; it keeps what it grew to,
// as the heap would at the peak.  The daemon is single-threaded where it
// makes these objects, so the pools take no lock.  Under AddressSanitizer
// the objects come from the heap as usual, so that a use after free is
// still caught.
#pragma once

#include <boost/pool/pool.hpp>
#include <boost/pool/singleton_pool.hpp>
#include <cstddef>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define CQMGR_POOLED_OBJECTS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CQMGR_POOLED_OBJECTS 0
#endif
#endif
#ifndef CQMGR_POOLED_OBJECTS
#define CQMGR_POOLED_OBJECTS 1
#endif

namespace cqmgr::core {

// Derive T from Pooled<T> (T : Pooled<T>) to allocate T's objects from
// its pool.  A class derived from T in turn, being larger, gets its
// objects from the heap unless it derives from Pooled itself.
template <class T> struct Pooled {
    static void* operator new(std::size_t n) {
        if (!CQMGR_POOLED_OBJECTS || n != sizeof(T)) return ::operator new(n);
        void* p = pool_of<T>::malloc();
        if (!p) throw std::bad_alloc();
        return p;
    }
    static void operator delete(void* p, std::size_t n) noexcept {
        if (!p) return;
        if (!CQMGR_POOLED_OBJECTS || n != sizeof(T))
            ::operator delete(p, n);
        else
            pool_of<T>::free(p);
    }

  private:
    struct Tag {};
    static constexpr unsigned objects_per_block = 64;
    // Named in member functions' bodies only: they see T complete, and the
    // class itself does not.
    template <class U>
    using pool_of = boost::singleton_pool<Tag, sizeof(U), boost::default_user_allocator_new_delete,
                                          boost::details::pool::null_mutex, objects_per_block,
                                          objects_per_block>;
};

} // namespace cqmgr::core
