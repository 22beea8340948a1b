/*
 * A disassembler plugin for JDK 17's -XX:+PrintAssembly and JMH's -prof perfasm, over Debian's
 * libhsdis0-fcml (apt-get install libhsdis0-fcml).
 *
 * That package exports only the old entry point, decode_instructions; JDK 17 looks up
 * decode_instructions_virtual, finds none, and prints the code as hex. This shim exports the new
 * entry point and calls the old one. HotSpot passes the code's own address as both the virtual
 * address and the buffer, so decoding in place is the same thing.
 *
 * Build and install (BENCHMARKS.md, "Reading the compiled code"):
 *   gcc -shared -fPIC -O2 -o hsdis-amd64.so hsdis-shim.c -ldl
 *   cp hsdis-amd64.so "$JAVA_HOME/lib/server/"
 */
#include <dlfcn.h>
#include <stdint.h>

typedef void *(*event_callback)(void *stream, const char *event, void *arg);
typedef int (*printf_callback)(void *stream, const char *format, ...);
typedef void *(*old_decode)(void *start, void *end, event_callback events, void *events_stream,
                            printf_callback printf, void *printf_stream, const char *options);

void *decode_instructions_virtual(uintptr_t start_va, uintptr_t end_va, unsigned char *buffer,
                                  uintptr_t length, event_callback events, void *events_stream,
                                  printf_callback printf, void *printf_stream, const char *options,
                                  int newline) {
  static old_decode decode;
  (void)buffer;
  (void)length;
  (void)newline;
  if (decode == 0) {
    void *fcml = dlopen("/usr/lib/x86_64-linux-gnu/libhsdis.so.0", RTLD_NOW);
    if (fcml == 0 || (decode = (old_decode)dlsym(fcml, "decode_instructions")) == 0) {
      return 0;
    }
  }
  return decode((void *)start_va, (void *)end_va, events, events_stream, printf, printf_stream,
                options);
}
