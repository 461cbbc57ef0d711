/* SPDX-License-Identifier: MIT */
/* A C extension whose three functions spin on the thread's CPU clock: called from
 * hot.py ("ext" mode), its frames sit below the Python frames that call them. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <time.h>

static unsigned long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static volatile unsigned long long sink;

static __attribute__((noinline)) void spin(unsigned long long ns)
{
	unsigned long long end = cpu_ns() + ns, x = sink;
	while (cpu_ns() < end) {
		for (int i = 0; i < 20000; i++) {
			x = x * 6364136223846793005ull + 1;
		}
	}
	sink = x;
}

#define EXT(name)                                                                      \
	static __attribute__((noinline)) PyObject *name(PyObject *self, PyObject *arg) \
	{                                                                              \
		(void)self;                                                            \
		spin(PyLong_AsUnsignedLongLong(arg));                                  \
		Py_RETURN_NONE;                                                        \
	}

EXT(ext_six)
EXT(ext_three)
EXT(ext_one)

static PyMethodDef methods[] = {
	{ "ext_six", ext_six, METH_O, NULL },
	{ "ext_three", ext_three, METH_O, NULL },
	{ "ext_one", ext_one, METH_O, NULL },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "hotext", NULL, -1, methods, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit_hotext(void)
{
	return PyModule_Create(&module);
}
