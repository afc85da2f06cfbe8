"""Logs the node a training run lands on before it starts: kernel, CPUs, and whether the
kernel still answers 32-bit system calls, which the team's older vendor tools need."""
import ctypes
import mmap
import os
import platform

# i386's getpid through the 32-bit gate: mov eax, 20; int 0x80; ret
IA32_GETPID = bytes([0xB8, 0x14, 0x00, 0x00, 0x00, 0xCD, 0x80, 0xC3])


def ia32_getpid():
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(IA32_GETPID)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return ctypes.CFUNCTYPE(ctypes.c_int)(address)()


def main():
    print(f"kernel {platform.release()} on {platform.machine()}, {os.cpu_count()} CPUs")
    pid = ia32_getpid()
    print(f"ia32 emulation: {'on' if pid == os.getpid() else 'off'} (getpid {pid})")


if __name__ == "__main__":
    main()
