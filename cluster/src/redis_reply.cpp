// A Redis reply copied out of hiredis, and its text for log lines (see
// redis_reply.hpp).
#include "cqmgr/cluster/redis_reply.hpp"

#include <hiredis/hiredis.h>

namespace cqmgr::cluster {

namespace {

// hiredis's own reply functions (static in hiredis): those of a new reader.
const redisReplyObjectFunctions& hiredis_functions() {
    static const redisReplyObjectFunctions fns = [] {
        redisReader* r = redisReaderCreate();
        redisReplyObjectFunctions f = *r->fn;
        redisReaderFree(r);
        return f;
    }();
    return fns;
}

// The type of createArray's count (int in hiredis 0.14, size_t later).
template <typename F> struct count_of;
template <typename R, typename A, typename N> struct count_of<R (*)(A, N)> { using type = N; };
using Count = count_of<decltype(redisReplyObjectFunctions::createArray)>::type;

void* create_array(const redisReadTask* task, Count elements) {
    if (static_cast<long>(elements) > max_reply_elements) return nullptr; // the reader fails
    return hiredis_functions().createArray(task, elements);
}

redisReplyObjectFunctions* guarded_functions() {
    static redisReplyObjectFunctions fns = [] {
        redisReplyObjectFunctions f = hiredis_functions();
        f.createArray = &create_array;
        return f;
    }();
    return &fns;
}

} // namespace

void guard_reader(redisReader* r) {
    r->fn = guarded_functions();
}

RedisReply from_hiredis(const redisReply* r) {
    RedisReply out;
    switch (r->type) {
    case REDIS_REPLY_STRING:
        out.type = RedisReply::Type::string;
        out.str.assign(r->str, r->len);
        break;
    case REDIS_REPLY_STATUS:
        out.type = RedisReply::Type::status;
        out.str.assign(r->str, r->len);
        break;
    case REDIS_REPLY_ERROR:
        out.type = RedisReply::Type::error;
        out.str.assign(r->str, r->len);
        break;
    case REDIS_REPLY_INTEGER:
        out.type = RedisReply::Type::integer;
        out.integer = r->integer;
        break;
    case REDIS_REPLY_ARRAY:
        out.type = RedisReply::Type::array;
        out.elements.reserve(r->elements);
        for (size_t i = 0; i < r->elements; i++)
            out.elements.push_back(from_hiredis(r->element[i]));
        break;
    default:
        out.type = RedisReply::Type::nil;
        break;
    }
    return out;
}

std::string describe(const RedisReply& r) {
    switch (r.type) {
    case RedisReply::Type::failed:
        return "failed: " + r.str;
    case RedisReply::Type::error:
        return "error: " + r.str;
    case RedisReply::Type::nil:
        return "(nil)";
    case RedisReply::Type::integer:
        return std::to_string(r.integer);
    case RedisReply::Type::string:
    case RedisReply::Type::status:
        return r.str;
    case RedisReply::Type::array: {
        std::string out = "[";
        for (size_t i = 0; i < r.elements.size(); i++)
            out += (i ? ", " : "") + describe(r.elements[i]);
        return out + "]";
    }
    }
    return {};
}

} // namespace cqmgr::cluster
