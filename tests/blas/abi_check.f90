! A Fortran program calling SGEMM the way Fortran code does: CHARACTER arguments with their
! lengths passed hidden at the end, and its own XERBLA, which must be the one called on an
! illegal argument whichever library provides SGEMM.  run_abi.sh compares its output when
! linked with the reference libblas alone and with tilegemm in front.
program abi_check_fortran
  implicit none
  integer, parameter :: m = 7, n = 5, k = 9
  real :: a(k + 2, m), b(n, k), c(m + 1, n)
  integer :: i, j
  do j = 1, m
     do i = 1, k + 2
        a(i, j) = real(mod(3 * i + j, 7) - 3)
     end do
  end do
  do j = 1, k
     do i = 1, n
        b(i, j) = real(mod(i + 2 * j, 5) - 2)
     end do
  end do
  c = 1.0
  ! C(1:m, 1:n) = 2 * A(1:k, :)^T * B^T - 0.5 * C, with leading dimensions beyond the minimum.
  call sgemm('Transpose', 't', m, n, k, 2.0, a, k + 2, b, n, -0.5, c, m + 1)
  do j = 1, n
     write (*, '(8F9.2)') c(:, j)
  end do
  ! Illegal arguments: our XERBLA reports, SGEMM returns, C stays as it was.
  call sgemm('N', 'N', m, n, k, 1.0, a, m - 1, b, n, 0.0, c, m + 1)
  call sgemm('N', 'Q', m, n, k, 1.0, a, k + 2, b, n, 0.0, c, 0)
  call sgemm('N', 'N', m, n, -1, 1.0, a, k + 2, b, k, 0.0, c, 0)
  write (*, '(A, F9.2)') 'c(1,1) after the illegal calls: ', c(1, 1)
end program abi_check_fortran

subroutine xerbla(srname, info)
  character(len=*), intent(in) :: srname
  integer, intent(in) :: info
  write (*, '(A, A, A, I0, A, I0)') 'XERBLA srname=', srname, ' info=', info, &
       ' len=', len(srname)
end subroutine xerbla
