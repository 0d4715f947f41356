"""Tools around the library: pictures, timing, and the process settings training runs fastest with.

    plot.py            attention heatmaps, positional encodings, loss curves (matplotlib)
    profile.py         where a training step's time goes, op by op (`train --profile`)
    speed_settings.py  tt.use_speed_settings(): one BLAS thread, keep freed memory (the command line applies it)
"""
