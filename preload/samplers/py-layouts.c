/* SPDX-License-Identifier: MIT */
/*
 * Where CPython keeps what the sampler reads, per minor version: offsets printed by
 * scripts/py-layouts.c compiled against each interpreter's own headers (pyenv's
 * 3.8.18 ... 3.13.0; Debian's 3.11 gives the same row as pyenv's). Within a minor
 * version these structures do not move. On 3.13 the offsets the interpreter
 * publishes in _PyRuntime.debug_offsets take precedence (py-stacks.c).
 *
 * Columns (struct isc_py_layout): version, _PyRuntimeState.interpreters.head,
 * PyInterpreterState.tstate_head|threads.head, PyThreadState.next, .thread_id,
 * .native_thread_id, .cframe (3.11-3.12), current frame (.frame, cframe->current_frame
 * or .current_frame), frame: previous|f_back, code (f_code|f_executable), instruction
 * (f_lasti|prev_instr|instr_ptr), owner, is_entry (3.11); code: co_name, co_filename,
 * co_firstlineno, co_lnotab|co_linetable, co_code_adaptive; PyBytesObject.ob_sval,
 * sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject), PyASCIIObject.state;
 * 3.11+: PyThreadState.datastack_chunk, _PyRuntimeState._finalizing.
 */
#include "preload/samplers/cpu-sampler.h"

const struct isc_py_layout isc_py_layouts[] = {
	{ 0x308, 32,  8,   8,  176, 0, 0,  24, 24, 32, 104, 0,
	  0,	 112, 104, 40, 120, 0, 32, 48, 72, 32, 0,   0 },
	{ 0x309, 32,  8,   8,  176, 0, 0,  24, 24, 32, 104, 0,
	  0,	 112, 104, 40, 120, 0, 32, 48, 72, 32, 0,   0 },
	{ 0x30a, 32,  8,   8,  176, 0, 0,  24, 24, 32, 96, 0,
	  0,	 112, 104, 40, 120, 0, 32, 48, 72, 32, 0,  0 },
	{ 0x30b, 40,  16,  8,  152, 160, 56, 8,	 48, 32, 56,  69,
	  68,	 120, 112, 72, 136, 184, 32, 48, 72, 32, 296, 24 },
	{ 0x30c, 40,  72,  8,  136, 144, 56, 0,	 8,  0,	 56,  70,
	  0,	 120, 112, 68, 136, 192, 32, 40, 56, 32, 232, 24 },
	{ 0x30d, 632, 7344, 8,	152, 160, 0,  72, 8,  0,  56,  70,
	  0,	 120, 112,  68, 136, 200, 32, 40, 56, 32, 232, 608 },
	{ 0 },
};
