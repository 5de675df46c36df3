//! The Linux guest of `cargo xtask bench --http`: the benchmark's Debian
//! kernel (the same one `cargo xtask bench` boots) with its virtio-net
//! modules, `busybox-static`, Debian's `nginx` (`apt-get download`, only
//! `/usr/sbin/nginx` unpacked) with the shared libraries `ldd` names for it
//! (copied from the host's Debian packages of the same release), the echo
//! server `bench/net/echo.c` (musl, static), and the sample documents of
//! `crates/http` — the bytes `httpd --samples` and `cheetah --samples`
//! write. nginx runs with one worker, `sendfile on`, no access log.
//! Cached in `<target>/bench/linux/http/`.

use super::cpio::Cpio;
use super::host::{self, Apt};
use super::linux;
use crate::build::write_if_changed;
use crate::meta::Workspace;
use crate::netns::{GUEST_IP, HOST_IP};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The modules of Debian's kernel every virtio PCI device needs, in load
/// order: (name, directory under `kernel/`).
pub(crate) const VIRTIO_PCI: [(&str, &str); 5] = [
    ("virtio_ring", "drivers/virtio"),
    ("virtio", "drivers/virtio"),
    ("virtio_pci_modern_dev", "drivers/virtio"),
    ("virtio_pci_legacy_dev", "drivers/virtio"),
    ("virtio_pci", "drivers/virtio"),
];

/// The modules virtio-net needs in Debian's kernel, in load order.
const MODULES: [(&str, &str); 8] = [
    VIRTIO_PCI[0],
    VIRTIO_PCI[1],
    VIRTIO_PCI[2],
    VIRTIO_PCI[3],
    VIRTIO_PCI[4],
    ("failover", "net/core"),
    ("net_failover", "drivers/net"),
    ("virtio_net", "drivers/net"),
];

/// The port the echo server listens on (as Oxok's `tcpecho` default).
pub(crate) const ECHO_PORT: u16 = 7;

/// A ready guest.
#[derive(Debug, Clone)]
pub(crate) struct WebGuest {
    pub kernel: PathBuf,
    pub initramfs: PathBuf,
    /// Package versions for the report.
    pub versions: Vec<(String, String)>,
}

/// The kernel command line.
pub(crate) const CMDLINE: &str = "console=ttyS0 quiet panic=-1 rdinit=/init";

/// Builds (or reuses) the guest.
pub(crate) fn prepare(ws: &Workspace) -> Result<WebGuest, String> {
    let cache = linux::cache_dir(ws);
    let dir = cache.join("http");
    mkdir(&dir)?;
    let mut apt = Apt::new(cache.join("apt.log"));
    let (vmlinuz, kernel_package) = linux::kernel(&cache, &mut apt)?;
    let kernel = linux::pvh_kernel(&cache, &vmlinuz, &mut apt)?;
    let modules = modules(&dir, &kernel_package, &mut apt, &MODULES)?;
    let (busybox, busybox_version) = linux::busybox(&cache, &mut apt)?;
    let (nginx, nginx_version) = nginx(&dir, &mut apt)?;
    apt.ensure_program("musl-gcc", "musl-tools", "to build the Linux echo server")?;
    let echo = dir.join("echo");
    linux::compile(&[&ws.root.join("bench").join("net").join("echo.c")], &echo)?;

    let mut c = Cpio::new();
    for d in ["bin", "dev", "etc", "etc/nginx", "lib", "lib/modules", "lib/x86_64-linux-gnu", "lib64", "proc"] {
        c.dir(d);
    }
    for d in ["run", "sys", "tmp", "usr", "usr/sbin", "var", "var/lib", "var/lib/nginx", "var/log", "var/log/nginx"] {
        c.dir(d);
    }
    c.dir("www");
    c.char_device("dev/console", 0o600, (5, 1));
    c.char_device("dev/null", 0o666, (1, 3));
    c.file("bin/busybox", 0o755, &read(&busybox)?);
    for applet in ["sh", "mount", "insmod", "ip", "sleep", "cat"] {
        c.symlink(&format!("bin/{applet}"), "busybox");
    }
    for (name, _) in MODULES {
        c.file(&format!("lib/modules/{name}.ko"), 0o644, &read(&modules.join(format!("{name}.ko")))?);
    }
    c.file("usr/sbin/nginx", 0o755, &read(&nginx)?);
    let ldd = Command::new("ldd").arg(&nginx).output().map_err(|e| format!("could not run ldd: {e}"))?;
    let libs = parse_ldd(&String::from_utf8_lossy(&ldd.stdout))?;
    for lib in &libs {
        c.file(lib.trim_start_matches('/'), 0o755, &read(Path::new(lib))?);
    }
    c.file("etc/passwd", 0o644, b"root:x:0:0:root:/:/bin/sh\nwww-data:x:33:33:www-data:/www:/bin/false\n");
    c.file("etc/group", 0o644, b"root:x:0:\nwww-data:x:33:\n");
    c.file("etc/nginx/nginx.conf", 0o644, nginx_conf("/www", 80).as_bytes());
    c.file("echo", 0o755, &read(&echo)?);
    c.file("www/index.html", 0o644, oxok_http::samples::index_html("nginx on Linux").as_bytes());
    for (name, len) in oxok_http::samples::SAMPLES {
        let bytes: Vec<u8> = (0..*len).map(|i| oxok_http::samples::sample_byte(name, i)).collect();
        c.file(&format!("www/{name}"), 0o644, &bytes);
    }
    c.file("init", 0o755, init_script().as_bytes());
    let initramfs = dir.join("initramfs.cpio");
    write_if_changed(&initramfs, &c.finish())?;
    let mut versions = vec![
        ("linux_kernel".to_string(), kernel_package),
        ("nginx".to_string(), nginx_version),
        ("busybox_static".to_string(), busybox_version),
    ];
    versions.push(("nginx_libraries".to_string(), library_packages(&libs)));
    Ok(WebGuest { kernel, initramfs, versions })
}

/// nginx's configuration: one worker, `sendfile on`, no access log,
/// keep-alive without a request limit (as Oxok's servers), the samples'
/// types.
pub(crate) fn nginx_conf(root: &str, port: u16) -> String {
    format!(
        "# Written by cargo xtask bench --http.
user www-data;
worker_processes 1;
worker_rlimit_nofile 4096;
daemon off;
master_process on;
pid /run/nginx.pid;
error_log stderr warn;
events {{
    worker_connections 2048;
}}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    server_tokens off;
    types {{
        text/html html;
        text/plain txt;
        application/octet-stream bin;
    }}
    default_type application/octet-stream;
    server {{
        listen {port} default_server;
        root {root};
        index index.html;
    }}
}}
"
    )
}

/// `/init`: the NIC's modules, the address, nginx and the echo server; then
/// it waits (the host stops the machine).
fn init_script() -> String {
    let mut s = String::from("#!/bin/sh\n# Oxok HTTP benchmark guest (written by cargo xtask bench --http).\n");
    s.push_str("mount -t proc proc /proc\nmount -t sysfs sys /sys\n");
    for (name, _) in MODULES {
        s.push_str(&format!("insmod /lib/modules/{name}.ko\n"));
    }
    s.push_str(&format!(
        "ip link set lo up\nip link set eth0 up\nip addr add {GUEST_IP}/24 dev eth0\nip route add default via {HOST_IP}\nip addr show dev eth0\n"
    ));
    s.push_str(&format!("/usr/sbin/nginx -e stderr -c /etc/nginx/nginx.conf &\n/echo {ECHO_PORT} &\n"));
    s.push_str("echo \"oxok-web: up\"\nwhile :; do sleep 3600; done\n");
    s
}

/// The files `ldd`'s output names (the loader included; the vDSO not).
pub(crate) fn parse_ldd(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.contains("not found") {
            return Err(format!("ldd: a library nginx needs is missing on the host: {line}"));
        }
        let path = match line.split_once("=>") {
            Some((_, rest)) => rest.split_whitespace().next(),
            None => line.split_whitespace().next().filter(|p| p.starts_with('/')),
        };
        if let Some(p) = path.filter(|p| p.starts_with('/')) {
            out.push(p.to_string());
        }
    }
    if out.is_empty() {
        return Err("ldd named no libraries for nginx".into());
    }
    Ok(out)
}

/// "package version" of each library's Debian package, comma-separated.
fn library_packages(libs: &[String]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for lib in libs {
        // With merged /usr, dpkg may know the file under /usr only.
        let owner = |path: &str| {
            let o = Command::new("dpkg").arg("-S").arg(path).output().ok().filter(|o| o.status.success())?;
            let s = String::from_utf8_lossy(&o.stdout).into_owned();
            s.split(':').next().map(|p| p.trim().to_string()).filter(|p| !p.is_empty())
        };
        let Some(pkg) = owner(lib).or_else(|| owner(&format!("/usr{lib}"))) else {
            continue;
        };
        let v = Command::new("dpkg-query").args(["-W", "-f=${Version}", &pkg]).output();
        let v = v.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
        let entry = format!("{pkg} {v}");
        if !seen.contains(&entry) {
            seen.push(entry);
        }
    }
    seen.join(", ")
}

/// The modules `list` (name, directory under `kernel/`) of the kernel
/// package (`name version`), from its `.deb`, cached in `dir/modules/`
/// with the version they came from.
pub(crate) fn modules(
    dir: &Path,
    kernel_package: &str,
    apt: &mut Apt,
    list: &[(&str, &str)],
) -> Result<PathBuf, String> {
    let out = dir.join("modules");
    let stamp = out.join("package");
    let have_all = list.iter().all(|(m, _)| out.join(format!("{m}.ko")).exists());
    if have_all && std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == kernel_package) {
        return Ok(out);
    }
    let name = kernel_package.split_whitespace().next().ok_or("no kernel package recorded")?;
    eprintln!("bench: fetching {name} again for its modules …");
    let download = dir.join("download");
    let _ = std::fs::remove_dir_all(&download);
    let deb = apt.download(name, &download)?;
    let version = format!("{name} {}", host::deb_field(&deb, "Version"));
    if version != kernel_package {
        let _ = std::fs::remove_dir_all(&download);
        return Err(format!(
            "Debian now has {version}, but the cached kernel is {kernel_package}: \
             delete target/bench/linux/ to fetch both again"
        ));
    }
    let unpacked = download.join("unpacked");
    host::extract_from_deb(&deb, "./lib/modules/*", &unpacked)?;
    let base = std::fs::read_dir(unpacked.join("lib/modules"))
        .map_err(|e| format!("{name} holds no modules: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path().join("kernel")))
        .next()
        .ok_or(format!("{name} holds no /lib/modules/VERSION"))?;
    mkdir(&out)?;
    for (m, sub) in list {
        let file = base.join(sub).join(format!("{m}.ko"));
        write_if_changed(&out.join(format!("{m}.ko")), &read(&file)?)?;
    }
    write_if_changed(&stamp, kernel_package.as_bytes())?;
    let _ = std::fs::remove_dir_all(&download);
    Ok(out)
}

/// `/usr/sbin/nginx` of Debian's `nginx` package, and its version.
fn nginx(dir: &Path, apt: &mut Apt) -> Result<(PathBuf, String), String> {
    let (bin, version) = (dir.join("nginx"), dir.join("nginx.version"));
    if let (true, Ok(v)) = (bin.exists(), std::fs::read_to_string(&version)) {
        return Ok((bin, v.trim().to_string()));
    }
    eprintln!("bench: fetching nginx into {} …", dir.display());
    let download = dir.join("download");
    let _ = std::fs::remove_dir_all(&download);
    let deb = apt.download("nginx", &download)?;
    let unpacked = download.join("unpacked");
    host::extract_from_deb(&deb, "./usr/sbin/nginx", &unpacked)?;
    let v = host::deb_field(&deb, "Version");
    write_if_changed(&bin, &read(&unpacked.join("usr/sbin/nginx"))?)?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot make {} executable: {e}", bin.display()))?;
    }
    write_if_changed(&version, v.as_bytes())?;
    let _ = std::fs::remove_dir_all(&download);
    Ok((bin, v))
}

fn read(p: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

fn mkdir(p: &Path) -> Result<(), String> {
    std::fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nginx_config_is_the_benchmark_s() {
        let c = nginx_conf("/www", 80);
        for line in ["worker_processes 1;", "sendfile on;", "access_log off;", "listen 80 default_server;"] {
            assert!(c.contains(line), "{line} missing");
        }
        assert!(c.contains("root /www;") && c.contains("daemon off;"));
        // Braces balance.
        assert_eq!(c.matches('{').count(), c.matches('}').count());
    }

    #[test]
    fn reads_ldd() {
        let out = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                   \tlibcrypt.so.1 => /lib/x86_64-linux-gnu/libcrypt.so.1 (0x00007fa0)\n\
                   \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007fa1)\n\
                   \t/lib64/ld-linux-x86-64.so.2 (0x00007fa2)\n";
        assert_eq!(
            parse_ldd(out).expect("parses"),
            ["/lib/x86_64-linux-gnu/libcrypt.so.1", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"]
        );
        assert!(parse_ldd("\tlibpcre2-8.so.0 => not found\n").is_err());
        assert!(parse_ldd("\tstatically linked\n").is_err());
    }

    #[test]
    fn init_loads_the_nic_then_starts_the_servers() {
        let s = init_script();
        let at = |w: &str| s.find(w).unwrap_or_else(|| panic!("{w} missing"));
        assert!(at("insmod /lib/modules/virtio_ring.ko") < at("insmod /lib/modules/virtio_net.ko"));
        assert!(at("virtio_net.ko") < at("ip addr add 10.0.2.15/24 dev eth0"));
        assert!(at("ip addr add") < at("/usr/sbin/nginx"));
        assert!(s.contains("/echo 7 &"));
    }
}
