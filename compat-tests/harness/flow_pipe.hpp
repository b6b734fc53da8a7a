// The in-flow token pipe that master(8) shares with all its children (fd 3
// read end, fd 4 write end): the queue manager writes tokens, cleanup(8)
// reads one per message. Its fill level is not logged anywhere, but root
// can open the pipe through /proc and ask how many bytes it holds.
#pragma once

#include <sys/types.h>

namespace compat {

// Tokens (bytes) in the flow pipe of `master_pid`'s children, or -1 when no
// child with the pipe on fd 3 was found.
long flow_tokens(pid_t master_pid);

} // namespace compat
