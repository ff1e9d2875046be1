/* SPDX-License-Identifier: MIT */
/*
** soclone.c: copies of one built plugin under new names, for the start-up
** benchmarks with 10,000 plugins, where a compiler and a linker per plugin
** would take longer than everything measured.
*/
#define _GNU_SOURCE /* memmem */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
** usage: soclone TEMPLATE.so STEM FORMAT FIRST LAST DIR
** TEMPLATE.so was linked with --hash-style=sysv and spells STEM (say
** "p00000") in its entry point's name, its tool names and descriptions.
** For every I from FIRST to LAST, DIR/NAME.so is TEMPLATE with every STEM
** replaced by NAME = FORMAT with I (same length as STEM) and the dynamic
** symbol hash table rebuilt for the new names, so that dlsym() finds
** register_NAME_tool. Each copy is a real file of its own, mapped and
** relocated by the dynamic linker as any plugin is.
*/

static unsigned long elf_hash(const unsigned char *name)
{
    unsigned long h = 0, g;
    for (; *name; name++) {
        h = (h << 4) + *name;
        g = h & 0xf0000000UL;
        if (g)
            h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* The sysv hash table, rebuilt from the (renamed) dynamic symbols: the
 * buckets depend on the names, so a renamed symbol would not be found. */
static int rehash(unsigned char *img, size_t size)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        return -1;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    const Elf64_Shdr *hash = NULL, *dynsym = NULL;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type == SHT_HASH)
            hash = &sh[i];
        if (sh[i].sh_type == SHT_DYNSYM)
            dynsym = &sh[i];
        if (sh[i].sh_type == SHT_GNU_HASH)
            return -1; /* would need rebuilding too: link with --hash-style=sysv */
    }
    if (!hash || !dynsym || dynsym->sh_link >= eh->e_shnum)
        return -1;
    const char *strtab = (const char *)img + sh[dynsym->sh_link].sh_offset;
    const Elf64_Sym *syms = (const Elf64_Sym *)(img + dynsym->sh_offset);
    Elf32_Word *h = (Elf32_Word *)(img + hash->sh_offset);
    Elf32_Word nbucket = h[0], nchain = h[1];
    Elf32_Word *bucket = h + 2, *chain = bucket + nbucket;
    if (nbucket == 0 || nchain != dynsym->sh_size / sizeof *syms)
        return -1;
    memset(bucket, 0, nbucket * sizeof *bucket);
    memset(chain, 0, nchain * sizeof *chain);
    for (Elf32_Word i = 1; i < nchain; i++) {
        unsigned long b = elf_hash((const unsigned char *)strtab + syms[i].st_name) % nbucket;
        chain[i] = bucket[b];
        bucket[b] = i;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: soclone TEMPLATE.so STEM FORMAT FIRST LAST DIR\n");
        return 2;
    }
    const char *stem = argv[2], *format = argv[3], *dir = argv[6];
    long first = atol(argv[4]), last = atol(argv[5]);
    size_t stemlen = strlen(stem);
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    size_t size = (size_t)st.st_size;
    unsigned char *tmpl = malloc(size), *img = malloc(size);
    if (!tmpl || !img || read(fd, tmpl, size) != (ssize_t)size) {
        fprintf(stderr, "soclone: cannot read %s\n", argv[1]);
        return 1;
    }
    close(fd);
    for (long i = first; i <= last; i++) {
        char name[64], path[4096];
        if (snprintf(name, sizeof name, format, i) != (int)stemlen) {
            fprintf(stderr, "soclone: '%s' with %ld is not as long as '%s'\n", format, i, stem);
            return 1;
        }
        memcpy(img, tmpl, size);
        for (unsigned char *p = img; (p = memmem(p, size - (size_t)(p - img), stem, stemlen)); p += stemlen)
            memcpy(p, name, stemlen);
        if (rehash(img, size) != 0) {
            fprintf(stderr, "soclone: %s: not a 64-bit ELF with only a sysv hash table\n", argv[1]);
            return 1;
        }
        snprintf(path, sizeof path, "%s/%s.so", dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, img, size) != (ssize_t)size || close(fd) != 0) {
            perror(path);
            return 1;
        }
    }
    free(tmpl);
    free(img);
    return 0;
}
