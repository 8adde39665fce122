/* cuda_plugin.c — finding and loading libxtts-cuda.so (kernels/cuda_plugin.h). */
#include "kernels/cuda_plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef XTTS_CUDA_PLUGIN_DIR
#define XTTS_CUDA_PLUGIN_DIR "/usr/local/lib/xtts-prep"
#endif
#define PLUGIN_NAME "libxtts-cuda.so"

static pthread_once_t plugin_once = PTHREAD_ONCE_INIT;
static void *plugin_handle;
static char plugin_why[512];

/* dlopen one candidate; 1 when loaded and of our ABI. A file that exists but does not load
 * (a CUDA library missing, another version) is the reason reported, not "not found". */
static int try_load(const char *path, int *found_any) {
    if (access(path, F_OK) != 0) return 0;
    *found_any = 1;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(plugin_why, sizeof plugin_why, "the CUDA plugin %s does not load: %s", path, e ? e : "unknown error");
        return 0;
    }
    const char *(*abi)(void) = NULL;
    void *sym = dlsym(h, "xtts_cudaplugin_abi");
    if (sym) memcpy(&abi, &sym, sizeof abi);
    const char *theirs = abi ? abi() : "none";
    if (strcmp(theirs, XTTS_CUDA_PLUGIN_ABI) != 0) {
        snprintf(plugin_why, sizeof plugin_why, "the CUDA plugin %s is '%s', this program needs '%s'", path, theirs,
                 XTTS_CUDA_PLUGIN_ABI);
        dlclose(h);
        return 0;
    }
    plugin_handle = h;
    return 1;
}

static void load_plugin(void) {
    int found_any = 0;
    const char *env = getenv("XTTS_CUDA_PLUGIN");
    if (env && *env) {
        if (!try_load(env, &found_any) && !found_any)
            snprintf(plugin_why, sizeof plugin_why, "XTTS_CUDA_PLUGIN=%s: no such file", env);
        return;
    }
    /* Without the NVIDIA driver no device can be used: say so without loading the plugin,
     * whose CUDA libraries take about 60 ms and 200 MB of mappings to load (a CPU-only
     * node pays that on every run of --device auto otherwise). XTTS_CUDA_PLUGIN, above,
     * always loads what it names. The handle stays open: the CUDA runtime loads it too. */
    if (!dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
        snprintf(plugin_why, sizeof plugin_why, "no CUDA driver (libcuda.so.1 is not installed)");
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            const char *rel[] = {"/../lib/xtts-prep/" PLUGIN_NAME, "/../lib/" PLUGIN_NAME};
            for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
                char path[PATH_MAX + 64];
                snprintf(path, sizeof path, "%s%s", exe, rel[i]);
                if (try_load(path, &found_any)) return;
            }
        }
    }
    if (try_load(XTTS_CUDA_PLUGIN_DIR "/" PLUGIN_NAME, &found_any)) return;
    if (!found_any)
        snprintf(plugin_why, sizeof plugin_why,
                 "the CUDA plugin " PLUGIN_NAME " was not found (next to the program in ../lib or ../lib/xtts-prep, "
                 "in " XTTS_CUDA_PLUGIN_DIR ", or at $XTTS_CUDA_PLUGIN)");
}

void *xtts_cuda_plugin_symbol(const char *name, char *why, size_t why_len) {
    pthread_once(&plugin_once, load_plugin);
    if (!plugin_handle) {
        if (why && why_len) snprintf(why, why_len, "%s", plugin_why);
        return NULL;
    }
    void *sym = dlsym(plugin_handle, name);
    if (!sym && why && why_len) snprintf(why, why_len, "the CUDA plugin lacks %s", name);
    return sym;
}
