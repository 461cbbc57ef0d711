/* SPDX-License-Identifier: MIT */
/*
 * Prints one row of preload/samplers/py-layouts.c for the CPython whose headers it
 * is compiled with (scripts/py-layouts.sh builds it once per interpreter found).
 * Offsets come from the interpreter's own headers, so the table is what CPython
 * really lays out, not a transcription.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x03090000
#include <internal/pycore_interp.h>
#endif
#include <internal/pycore_pystate.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#endif
#if PY_VERSION_HEX >= 0x03090000
#include <internal/pycore_runtime.h>
#endif

#define O(t, f) ((unsigned)offsetof(t, f))

int main(void)
{
	unsigned interp_head = O(_PyRuntimeState, interpreters.head);
#if PY_VERSION_HEX >= 0x030B0000
	unsigned tstate_head = O(PyInterpreterState, threads.head);
	unsigned native_tid = O(PyThreadState, native_thread_id);
#else
	unsigned tstate_head = O(PyInterpreterState, tstate_head);
	unsigned native_tid = 0;
#endif
	unsigned cframe = 0, cur = 0, f_prev, f_code, f_instr, f_owner = 0, f_entry = 0;
#if PY_VERSION_HEX >= 0x030D0000
	cur = O(PyThreadState, current_frame);
	f_prev = O(_PyInterpreterFrame, previous);
	f_code = O(_PyInterpreterFrame, f_executable);
	f_instr = O(_PyInterpreterFrame, instr_ptr);
	f_owner = O(_PyInterpreterFrame, owner);
#elif PY_VERSION_HEX >= 0x030B0000
	cframe = O(PyThreadState, cframe);
	cur = O(_PyCFrame, current_frame);
	f_prev = O(_PyInterpreterFrame, previous);
	f_code = O(_PyInterpreterFrame, f_code);
	f_instr = O(_PyInterpreterFrame, prev_instr);
	f_owner = O(_PyInterpreterFrame, owner);
#if PY_VERSION_HEX < 0x030C0000
	f_entry = O(_PyInterpreterFrame, is_entry);
#endif
#else
	cur = O(PyThreadState, frame);
	f_prev = O(PyFrameObject, f_back);
	f_code = O(PyFrameObject, f_code);
	f_instr = O(PyFrameObject, f_lasti);
#endif
#if PY_VERSION_HEX >= 0x030A0000
	unsigned lines = O(PyCodeObject, co_linetable);
#else
	unsigned lines = O(PyCodeObject, co_lnotab);
#endif
#if PY_VERSION_HEX >= 0x030B0000
	unsigned code_start = O(PyCodeObject, co_code_adaptive);
#else
	unsigned code_start = 0;
#endif
#if PY_VERSION_HEX >= 0x030B0000
	unsigned datastack = O(PyThreadState, datastack_chunk);
	unsigned finalizing = O(_PyRuntimeState, _finalizing);
#else
	unsigned datastack = 0, finalizing = 0;
#endif
	printf("\t{ 0x%x, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, %u, "
	       "%u, %u, %u, %u, %u, %u },\n",
	       PY_MAJOR_VERSION << 8 | PY_MINOR_VERSION, interp_head, tstate_head,
	       O(PyThreadState, next), O(PyThreadState, thread_id), native_tid, cframe, cur, f_prev,
	       f_code, f_instr, f_owner, f_entry, O(PyCodeObject, co_name),
	       O(PyCodeObject, co_filename), O(PyCodeObject, co_firstlineno), lines, code_start,
	       (unsigned)offsetof(PyBytesObject, ob_sval), (unsigned)sizeof(PyASCIIObject),
	       (unsigned)sizeof(PyCompactUnicodeObject), O(PyASCIIObject, state), datastack,
	       finalizing);
	return 0;
}
