"""Asks the kernel for calls a seccomp policy refuses, with arguments an ordinary user's
process is granted without one, and checks each answer against the policy the job runs
under (policies/seccomp/). Exits nonzero, naming the call, on the first surprise."""
import argparse
import ctypes
import errno
import os
import threading

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# x86-64 system call numbers (asm/unistd_64.h).
CLONE, UNSHARE, KEYCTL, BPF, USERFAULTFD, IO_URING_SETUP, CLONE3, GET_MEMPOLICY, SOCKET, CHROOT = (
    56, 272, 250, 321, 323, 425, 435, 239, 41, 161)
CLONE_NEWUSER, SIGCHLD = 0x10000000, 17
AF_VSOCK, SOCK_STREAM = 40, 1
KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING = 0, -3
UFFD_USER_MODE_ONLY = 1


def call(number, *args):
    ctypes.set_errno(0)
    result = libc.syscall(number, *[ctypes.c_long(a) for a in args])
    return result, ctypes.get_errno()


def clone_new_user():
    pid, error = call(CLONE, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    return pid, error


def io_uring():
    params = ctypes.create_string_buffer(120)
    return call(IO_URING_SETUP, 1, ctypes.addressof(params))


def vsock():
    fd, error = call(SOCKET, AF_VSOCK, SOCK_STREAM, 0)
    if fd >= 0:
        os.close(fd)
    return fd, error


def chroot():
    root = ctypes.create_string_buffer(b"/")
    return call(CHROOT, ctypes.addressof(root))


def get_mempolicy():
    mode = ctypes.c_int()
    return call(GET_MEMPOLICY, ctypes.addressof(mode), 0, 0, 0, 0)


# unshare last: once in a user namespace of its own, the process's ids are unmapped there.
CALLS = {
    "clone(CLONE_NEWUSER)": clone_new_user,
    "keyctl(KEYCTL_GET_KEYRING_ID)": lambda: call(KEYCTL, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0),
    "userfaultfd(UFFD_USER_MODE_ONLY)": lambda: call(USERFAULTFD, UFFD_USER_MODE_ONLY),
    "io_uring_setup": io_uring,
    "get_mempolicy": get_mempolicy,
    "clone3": lambda: call(CLONE3, 0, 0),
    "socket(AF_VSOCK)": vsock,
    "chroot": chroot,
    "unshare(CLONE_NEWUSER)": lambda: call(UNSHARE, CLONE_NEWUSER),
}

# What each policy answers: EPERM or ENOSYS, or None for "not refused" (the call reaches the
# kernel, whose own answer does not matter here). Unconfined, the calls a host's own settings
# may refuse an ordinary user with EPERM (user namespaces, userfaultfd, io_uring) are not
# checked, nor are AF_VSOCK (the host may lack the module) and chroot (no capability refuses it
# there too).
EXPECTED = {
    "default": {name: errno.EPERM for name in CALLS} | {"clone3": errno.ENOSYS},
    "unconfined": {"keyctl(KEYCTL_GET_KEYRING_ID)": None, "get_mempolicy": None, "clone3": None},
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--policy", choices=sorted(EXPECTED), required=True)
    args = parser.parse_args()
    for name, expected in EXPECTED[args.policy].items():
        result, error = CALLS[name]()
        refused = result == -1 and error in (errno.EPERM, errno.ENOSYS)
        if expected is None and refused:
            raise SystemExit(f"{name}: refused with {errno.errorcode[error]} under {args.policy}")
        if expected is not None and (result != -1 or error != expected):
            raise SystemExit(f"{name}: answered {result} ({errno.errorcode.get(error, error)}), "
                             f"expected {errno.errorcode[expected]} under {args.policy}")
        print(f"{name}: {'refused, ' + errno.errorcode[error] if refused else 'allowed'}")
    # What every job needs stays allowed: fork, threads.
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    worker = threading.Thread(target=print, args=("thread: allowed",))
    worker.start()
    worker.join()


if __name__ == "__main__":
    main()
