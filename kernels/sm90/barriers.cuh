/*
** barriers.cuh -- the sm90 kernel's named-barrier ids (bar.sync/bar.arrive
** take ids 0..15; 0 is __syncthreads).  One enum so that no two roles share
** an id by accident.
*/
#ifndef FA4_SM90_BARRIERS_CUH
#define FA4_SM90_BARRIERS_CUH

enum fa4_sm90_named_barrier {
    FA4_BAR_CTA = 0,          /* __syncthreads: only before the role split */
    FA4_BAR_EPILOGUE_WG0 = 1, /* + wg: the 128 threads of consumer wg, epilogue */
    FA4_BAR_PINGPONG_WG0 = 4  /* + wg: consumer wg may issue its GEMMs (256 threads:
                                 its own 128 wait, the previous wg's 128 arrive);
                                 ids 7..15 are free */
};

#endif
