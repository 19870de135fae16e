O=$OUT; export FA4_DB=/tmp/s7c.db FA4_SYSTEM_DB=
FA4_FAMILIES=sm80 PYTHONUNBUFFERED=1 timeout 330 python3 bench/compare.py --lib build/.libs/libfa4.so --no-fa4-cute --reps 10 --gemm 0 --json "$O/compare80.json" > "$O/compare80.log" 2>&1; echo rc=$?; grep -A4 "^geomean" "$O/compare80.log"
