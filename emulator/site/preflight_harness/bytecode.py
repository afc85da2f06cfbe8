"""What `dis` says about a code object's control flow, for the stages (is this evaluation in
the training loop?) and the loop cut (which loops train, and where do they end)."""

import dis

UNCONDITIONAL = ("JUMP_FORWARD", "JUMP_ABSOLUTE", "JUMP", "JUMP_NO_INTERRUPT")
STOPS = ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE")

_loops = {}


# The opcodes that jump (hasjump from 3.13; hasjrel and hasjabs before).
JUMPS = frozenset(getattr(dis, "hasjump", ())) | frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def ends_flow(ins):
    """True when execution never goes on to the next instruction."""
    return ins.opname in UNCONDITIONAL or ins.opname.startswith("JUMP_BACKWARD")


def loops(code):
    """[(first offset, last offset)] of every loop in `code`, one per loop (a `continue` adds
    another backward jump to the same start; the loop ends at the last). A backward jump that
    ordinary control flow from its target never reaches is not a loop: from 3.11 an exception
    handler laid out after the body jumps back into it, and from 3.12 so does the cleanup of a
    `with` statement (JUMP_BACKWARD_NO_INTERRUPT), back over everything the statement holds."""
    spans = _loops.get(code)
    if spans is None:
        instructions = list(dis.get_instructions(code))
        ends = {}
        for ins in instructions:
            target = ins.argval
            if ins.opcode in JUMPS and isinstance(target, int) and target < ins.offset and \
                    ins.offset not in ends.get(target, ()) and \
                    _reaches(instructions, target, ins.offset):
                ends.setdefault(target, set()).add(ins.offset)
        spans = _loops[code] = sorted((start, max(ends[start])) for start in ends)
    return spans


def _reaches(instructions, start, end):
    """True when the instruction at `end` follows from `start` without an exception."""
    index = dict((ins.offset, i) for i, ins in enumerate(instructions))
    seen, todo = set(), [start]
    while todo:
        offset = todo.pop()
        if offset in seen or offset not in index or not start <= offset <= end:
            continue
        if offset == end:
            return True
        seen.add(offset)
        i = index[offset]
        ins = instructions[i]
        if ins.opcode in JUMPS and isinstance(ins.argval, int):
            todo.append(ins.argval)
            if ends_flow(ins):
                continue
        if ins.opname not in STOPS and i + 1 < len(instructions):
            todo.append(instructions[i + 1].offset)
    return False
