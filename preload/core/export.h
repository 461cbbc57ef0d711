/* SPDX-License-Identifier: MIT */
/*
 * What the library exports: the interposers, the public API and the injection entry
 * points, and nothing else (everything is built -fvisibility=hidden; libinferscope.map
 * lists the same names and a test compares the two).
 */
#ifndef ISC_EXPORT_H
#define ISC_EXPORT_H

#define ISC_EXPORT __attribute__((visibility("default")))

#endif /* ISC_EXPORT_H */
