// Phase marks for the Arm performance lab (lab). Under qemu, lab/tb_profile.c counts the
// executed code per phase between these marks, which is how `tessel bench --estimate` splits one
// inference into per-op cycle estimates. A mark is getpid() with extra arguments (ignored by every
// kernel and allowed by every sandbox), so a marked run behaves as an unmarked one outside qemu.
#ifndef TESSEL_RUNTIME_LAB_MARKS_H_
#define TESSEL_RUNTIME_LAB_MARKS_H_

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tessel {

// Must match kMarkMagic in lab/tb_profile.c.
inline constexpr uint64_t kLabMarkMagic = 0x7e55e1ab;

// Whether TESSEL_LAB_MARKS=1 asks for marks (read once per call site's owner, outside hot loops).
inline bool LabMarksRequested() {
  const char* v = std::getenv("TESSEL_LAB_MARKS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// Starts phase `label` (the executor: the op's index before it runs, -1 after the last op).
inline void LabMark(int64_t label) { syscall(SYS_getpid, kLabMarkMagic, label); }

}  // namespace tessel

#endif  // TESSEL_RUNTIME_LAB_MARKS_H_
