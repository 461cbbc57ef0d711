/* SPDX-License-Identifier: MIT */
/*
 * An allocation- and I/O-heavy C program for the end-to-end overhead table: a word
 * indexer. Each round generates text lines, writes them to a file in 4 KiB write(2)
 * calls, reads the file back in 64 KiB read(2) calls, splits every line into words
 * kept in a per-line token array that grows with realloc, and counts words in a
 * hash table (a malloc'd entry and copy per new word) that is freed at the end of
 * the round. Prints a checksum, the same with and without any tool.
 *
 * MODE "line" (default) copies each line once and points into the copy: about four
 * allocations per line, the allocator takes ~15% of the time. MODE "word" copies
 * every word on its own and frees the copies of known words: ~25 million malloc and
 * free calls per second, half of the time in the allocator - a stress case.
 * Usage: bench-workload DIR [ROUNDS [LINES [MODE]]]
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TABLE (1u << 16)

struct word {
	struct word *next;
	char *text;
	unsigned long count;
};

struct line {
	char **tok;
	size_t n, cap;
};

static struct word *table[TABLE];
static int per_word;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	}
	return h;
}

/* Counts one word. In "word" mode w is a copy that a new entry keeps (and that is
 * freed otherwise); in "line" mode a new entry copies it. */
static void count(char *w, size_t n)
{
	struct word **slot = &table[hash(w, n) & (TABLE - 1)];
	for (struct word *e = *slot; e; e = e->next) {
		if (strcmp(e->text, w) == 0) {
			e->count++;
			if (per_word) {
				free(w);
			}
			return;
		}
	}
	struct word *e = malloc(sizeof(*e));
	if (!per_word) {
		char *copy = malloc(n + 1);
		memcpy(copy, w, n + 1);
		w = copy;
	}
	e->text = w;
	e->count = 1;
	e->next = *slot;
	*slot = e;
}

static void generate(int fd, uint64_t seed, int lines)
{
	char buf[4096];
	size_t used = 0;
	for (int i = 0; i < lines; i++) {
		char line[256];
		size_t len = 0;
		uint64_t h = mix(seed + (uint64_t)i);
		int words = 8 + (int)(h % 12);
		for (int k = 0; k < words; k++) {
			uint64_t w = mix(h + (uint64_t)k) % 5000;
			len += (size_t)snprintf(line + len, sizeof(line) - len, "w%lux%lu ",
						(unsigned long)w, (unsigned long)(w % 97));
		}
		line[len - 1] = '\n';
		if (used + len > sizeof(buf)) {
			if (write(fd, buf, used) != (ssize_t)used) {
				exit(1);
			}
			used = 0;
		}
		memcpy(buf + used, line, len);
		used += len;
	}
	if (used && write(fd, buf, used) != (ssize_t)used) {
		exit(1);
	}
}

/* Splits s into words: copies of each ("word") or pointers into one copy of s. */
static char *tokenize(struct line *l, const char *s, size_t n)
{
	char *copy = per_word ? NULL : malloc(n + 1);
	size_t i = 0;
	if (copy) {
		memcpy(copy, s, n);
		copy[n] = '\0';
	}
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] != ' ') {
			j++;
		}
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 4;
			l->tok = realloc(l->tok, l->cap * sizeof(char *));
		}
		char *w = copy ? copy + i : malloc(j - i + 1);
		if (copy) {
			copy[j] = '\0';
		} else {
			memcpy(w, s + i, j - i);
			w[j - i] = '\0';
		}
		l->tok[l->n++] = w;
		i = j + 1;
	}
	return copy;
}

/* Reads the file back, tokenizes every line and counts its words. */
static unsigned long index_file(const char *path)
{
	static char buf[1 << 16];
	char carry[512];
	size_t have = 0;
	unsigned long lines = 0;
	int fd = open(path, O_RDONLY);
	ssize_t got;
	while ((got = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != '\n') {
				carry[have++] = buf[i];
				continue;
			}
			struct line l = { NULL, 0, 0 };
			char *copy = tokenize(&l, carry, have);
			for (size_t k = 0; k < l.n; k++) {
				count(l.tok[k], strlen(l.tok[k]));
			}
			free(l.tok);
			free(copy);
			have = 0;
			lines++;
		}
	}
	close(fd);
	return lines;
}

static unsigned long drain_table(void)
{
	unsigned long sum = 0;
	for (unsigned i = 0; i < TABLE; i++) {
		struct word *e = table[i];
		while (e) {
			struct word *next = e->next;
			sum += e->count * (unsigned long)strlen(e->text);
			free(e->text);
			free(e);
			e = next;
		}
		table[i] = NULL;
	}
	return sum;
}

int main(int argc, char **argv)
{
	char path[4096];
	int rounds = argc > 2 ? atoi(argv[2]) : 10;
	int lines = argc > 3 ? atoi(argv[3]) : 20000;
	per_word = argc > 4 && strcmp(argv[4], "word") == 0;
	unsigned long sum = 0, n = 0;
	snprintf(path, sizeof(path), "%s/bench-workload.%d.txt", argc > 1 ? argv[1] : "/tmp",
		 (int)getpid());
	for (int round = 0; round < rounds; round++) {
		int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
		generate(fd, (uint64_t)round * 7919, lines);
		close(fd);
		n += index_file(path);
		sum += drain_table();
	}
	unlink(path);
	printf("checksum %lu lines %lu\n", sum, n);
	return 0;
}
