"""``vocalbench serve --system SPEC --port P [--faults SPEC]``: a system as an OpenAI-compatible endpoint."""

from __future__ import annotations

import argparse
import asyncio


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--system", default="offline", help="system SPEC to serve (default: offline)")
    p.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: pick a free one, printed)")
    p.add_argument("--faults", default=None,
                   help='inject faults per request, e.g. "429:0.1,500:0.1,timeout:0.05,drop:0.1"')
    p.add_argument("--fault-seed", type=int, default=0, help="seed of the fault generator")
    p.add_argument("--hang-seconds", type=float, default=3600.0, help="how long a 'timeout' fault stays silent")
    p.add_argument("--system-base-url", default=None, help="base URL of a network system being re-served")
    p.add_argument("--voice", default=None, help="voice of the served system, where it has voices")
    p.add_argument("--max-reply-tokens", type=int, default=None,
                   help="reply token cap of the served system (default: 64 for the local cascades, 1024 for network systems)")
    p.add_argument("--turn-detection", choices=("silero", "energy"), default=None,
                   help="offer server-side turn detection to realtime sessions that ask for it (session "
                        "turn_detection server_vad): silero = the Silero VAD model; energy = frame RMS above "
                        "-40 dBFS (exact on synthetic audio, for harness tests). Default: off")
    p.add_argument("--quiet", action="store_true", help="print only the serving line")


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from vocalbench.errors import CliError
    from vocalbench.redact import system_credentials
    from vocalbench.systems import resolve
    from vocalbench.systems.options import SystemOptions
    from vocalbench.systems.serve import FaultPlan, serve_forever

    refused = system_credentials(args.system, args.system_base_url)
    if refused:
        raise CliError(refused)
    try:
        faults = replace(FaultPlan.parse(args.faults), hang_seconds=args.hang_seconds)
        system = resolve(args.system, SystemOptions.from_env(args.system_base_url, args.voice, args.max_reply_tokens))
        if args.turn_detection == "silero":
            from vocalbench.components.vad import silero_model_path

            silero_model_path()  # a missing model fails here, not at the first conversation
    except (ValueError, FileNotFoundError, ImportError) as exc:
        raise CliError(str(exc)) from None
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: a port is 0..65535 (0: pick a free one)")
    try:
        asyncio.run(serve_forever(system, args.port, faults, args.fault_seed, args.quiet, args.turn_detection))
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        raise CliError(f"--port {args.port}: cannot listen on 127.0.0.1:{args.port} "
                       f"({exc.strerror or exc}; is another server using it?)") from None
    return 0
