/* An LD_PRELOAD counter of the bytes malloc has handed out and not taken back, with their
 * peak: the ground truth that benchmarks/memory.sh sets the harness's step measurement
 * against. Every allocation function of glibc is wrapped; sizes are malloc_usable_size()'s. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static _Atomic long long current_total, peak_total;

static void *added(void *p) {
  if (!p) return p;
  long long now = atomic_fetch_add(&current_total, (long long)malloc_usable_size(p)) + (long long)malloc_usable_size(p);
  long long seen = atomic_load(&peak_total);
  while (now > seen && !atomic_compare_exchange_weak(&peak_total, &seen, now)) {
  }
  return p;
}

static void removed(void *p) {
  if (p) atomic_fetch_sub(&current_total, (long long)malloc_usable_size(p));
}

void *malloc(size_t size) { return added(__libc_malloc(size)); }
void *calloc(size_t n, size_t size) { return added(__libc_calloc(n, size)); }
void *memalign(size_t alignment, size_t size) { return added(__libc_memalign(alignment, size)); }
void *aligned_alloc(size_t alignment, size_t size) { return added(__libc_memalign(alignment, size)); }

void free(void *p) {
  removed(p);
  __libc_free(p);
}

void *realloc(void *p, size_t size) {
  long long before = p ? (long long)malloc_usable_size(p) : 0;
  void *q = __libc_realloc(p, size);
  if (q || size == 0) atomic_fetch_sub(&current_total, before);
  return added(q);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  void *p = __libc_memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = added(p);
  return 0;
}

long long preflight_current_bytes(void) { return atomic_load(&current_total); }
long long preflight_peak_bytes(void) { return atomic_load(&peak_total); }
void preflight_reset_peak(void) { atomic_store(&peak_total, atomic_load(&current_total)); }
