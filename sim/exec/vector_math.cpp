// Library-wide pieces of the vector math; the operations live in vector_unary.cpp,
// vector_binary.cpp, vector_select.cpp, vector_cast.cpp, vector_reduce.cpp and matrix.cpp.
#include "sim/exec/vector_math.h"

#include "sim/exec/vector_internal.h"

namespace mimic::exec {

const char* simdArchName() {
  return detail::Arch::name();
}

}  // namespace mimic::exec
